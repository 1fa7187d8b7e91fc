/**
 * Start-up failures as one printable line naming the cause and the fix
 * (`npm start`, the test global setup, benches): a port someone else holds,
 * a directory that cannot be written, a program that cannot run.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';

/** An error whose message is one line meant for the person starting the server. */
export class StartupError extends Error {
  override name = 'StartupError';
}

export class PortInUseError extends StartupError {
  override name = 'PortInUseError';
  constructor(
    readonly port: number,
    what: string,
    holder: string | undefined,
    fix: string,
  ) {
    super(`port ${port} (${what}) is already in use${holder ? ` by ${holder}` : ''}: ${fix}`);
  }
}

/** Socket inodes listening on `port` (any address), from /proc/net/tcp and tcp6. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st ... inode (column 9); st 0A = LISTEN
      if (cols.length < 10 || cols[3] !== '0A') continue;
      if (parseInt(cols[1]!.split(':')[1] ?? '', 16) === port) inodes.add(cols[9]!);
    }
  }
  return inodes;
}

/**
 * "pid 123 (postgres -D /x/postgres -p 54329)" for the process listening on
 * `port`, when /proc lets us see it (other users' processes need root);
 * undefined otherwise.
 */
export async function describePortHolder(port: number): Promise<string | undefined> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return undefined;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (!wanted.has(target)) continue;
      const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''))
        .replace(/\0+$/, '')
        .replace(/\0/g, ' ');
      const short = cmd.length > 120 ? `${cmd.slice(0, 117)}...` : cmd;
      return `pid ${pid}${short ? ` (${short})` : ''}`;
    }
  }
  return undefined;
}

/** Resolves when `host:port` can be bound right now; rejects with its listen error otherwise. */
function tryListen(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve()));
  });
}

/**
 * Throws a PortInUseError naming the holder when `port` is taken on `host`.
 * `what` names the component ("embedded PostgreSQL"), `fix` says what to do
 * (e.g. "set EMBEDDED_PG_PORT to a free port or stop that process").
 */
export async function assertPortFree(
  port: number,
  what: string,
  fix: string,
  host = '127.0.0.1',
): Promise<void> {
  if (port === 0) return;
  try {
    await tryListen(port, host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new PortInUseError(port, what, await describePortHolder(port), fix);
    if (code === 'EACCES')
      throw new StartupError(`port ${port} (${what}) needs privileges to listen on: ${fix}`);
    throw err;
  }
}

/** The fix for a taken port that an environment variable chooses. */
export const portFix = (envVar: string) => `set ${envVar} to a free port, or stop that process`;

/**
 * One line for any error: its message with newlines folded; the messages of
 * an AggregateError's parts (Node's connect errors have an empty message);
 * a readable text when something rejected with no error at all.
 */
export function oneLine(err: unknown): string {
  let text: string;
  if (err instanceof AggregateError && !err.message) {
    text = err.errors.map((e: unknown) => oneLine(e)).join('; ');
  } else if (err instanceof Error) {
    text = err.message || (err as NodeJS.ErrnoException).code || err.name;
  } else if (err === undefined || err === null) {
    text = 'failed without saying why';
  } else {
    text = typeof err === 'string' ? err : JSON.stringify(err);
  }
  text = text.replace(/\s*\n\s*/g, ' ').trim();
  return text.length > 600 ? `${text.slice(0, 597)}...` : text;
}
