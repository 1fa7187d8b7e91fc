/**
 * Telling "the database cannot be reached right now" apart from "this
 * statement is wrong": the first is worth waiting out inside an activity
 * that has already paid for its work (a model's answer), the second never is.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
/** SQLSTATE: 08 connection exception; 57P01–57P03 the server shutting down, crashed or starting. */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03']);
const MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Timeout acquiring a connection/i,
  /the database system is (starting up|shutting down)/i,
];

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code) || SHUTDOWN_STATES.has(code) || (code.length === 5 && code.startsWith('08')))
    return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return MESSAGES.some((m) => m.test(message));
}

/**
 * Runs `work`, and while it fails because the database is unavailable, runs it
 * again (backing off from 200 ms to 2 s) until `maxWaitMs` has passed; any
 * other error, or the last one, is thrown. `work` must be safe to repeat (an
 * idempotent statement: one that may have committed before its connection broke).
 */
export async function whileDatabaseUnavailable<T>(work: () => Promise<T>, maxWaitMs: number): Promise<T> {
  const deadline = Date.now() + maxWaitMs;
  for (let delay = 200; ; delay = Math.min(2_000, delay * 2)) {
    try {
      return await work();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() + delay > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
