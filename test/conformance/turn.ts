import type { PlatformClient } from './platform-client.js';

/** The fields of a run's view (GET /runs/{run_id}) the adapter reads. */
export interface RunView {
  run_id: string;
  status: string;
  output: { content?: unknown } | null;
  tool_calls?: Array<Record<string, string | undefined>>;
  error?: unknown;
  /** What the model was offered this turn, and why (servers listed or not). */
  tools?: unknown;
  warnings?: string[];
  pause?: { reason?: string; since?: string; details?: Record<string, unknown> } | null;
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const MOVING = new Set(['queued', 'running']);
const POLL_MS = 100;
/** Longer than any scenario's own wait; the conformance runner's --timeout ends us first. */
const TURN_DEADLINE_MS = Number(process.env.CONFORMANCE_TURN_TIMEOUT_MS ?? 60_000);

/** A call the scenario asks for by name, with the arguments to send (its context's `toolCalls`). */
export interface SuggestedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * What the person says: call every tool; with the scenario's suggested
 * arguments, as a person would paste them, in a JSON block the scripted
 * model reads (suggestedArguments in scripted-model.ts).
 */
function turnMessage(suggested: SuggestedCall[]): string {
  const ask = 'Call every tool you have, then say what happened.';
  if (!suggested.length) return ask;
  return `${ask} Use these arguments:\n\`\`\`json\n${JSON.stringify({ toolCalls: suggested })}\n\`\`\``;
}

/**
 * One converse turn to its end, playing the person the platform turns to: a
 * run `awaiting_authorization` has its authorization URL opened, a run
 * `awaiting_input` (an MCP server's question) is answered by accepting with
 * an empty content, so the platform applies the schema's defaults. Any other
 * pause (approval, budget, decision) is not something this turn should meet.
 */
export async function converseTurn(
  api: PlatformClient,
  agentId: string,
  authorize: (url: unknown) => Promise<void>,
  log: (message: string) => void,
  suggested: SuggestedCall[] = [],
): Promise<RunView> {
  const deadline = Date.now() + TURN_DEADLINE_MS;
  let run = await api.expectOk<RunView>('POST', '/converse', {
    agent_id: agentId,
    message: turnMessage(suggested),
  });
  for (;;) {
    if (ENDED.has(run.status)) return run;
    if (!MOVING.has(run.status)) {
      run = await withPause(api, run);
      await answerPause(api, run, authorize, log);
    }
    run = await nextState(api, run, deadline);
  }
}

/** The run's view with its `pause` (the converse answer may not carry it). */
async function withPause(api: PlatformClient, run: RunView): Promise<RunView> {
  if (run.pause?.details) return run;
  return api.expectOk<RunView>('GET', `/runs/${run.run_id}`);
}

async function answerPause(
  api: PlatformClient,
  run: RunView,
  authorize: (url: unknown) => Promise<void>,
  log: (message: string) => void,
): Promise<void> {
  const details = run.pause?.details ?? {};
  if (run.status === 'awaiting_authorization') {
    log(`run ${run.run_id} waits for authorization`);
    await authorize(details.authorization_url);
    return;
  }
  if (run.status === 'awaiting_input') {
    log(`run ${run.run_id} waits for input: ${JSON.stringify(details.message ?? null)}`);
    await api.expectOk('POST', `/runs/${run.run_id}/input`, { action: 'accept', content: {} });
    return;
  }
  throw new Error(`the turn paused with status ${run.status}: ${JSON.stringify(run.pause ?? null)}`);
}

/** Polls the run until it has ended, or paused anew (another status, or the same status with another pause). */
async function nextState(api: PlatformClient, handled: RunView, deadline: number): Promise<RunView> {
  const handledPause = JSON.stringify(handled.pause ?? null);
  for (;;) {
    const run = await api.expectOk<RunView>('GET', `/runs/${handled.run_id}`);
    const samePause = run.status === handled.status && JSON.stringify(run.pause ?? null) === handledPause;
    if (ENDED.has(run.status) || (!MOVING.has(run.status) && !samePause)) return run;
    if (Date.now() > deadline)
      throw new Error(`run ${run.run_id} still ${run.status} after ${TURN_DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
