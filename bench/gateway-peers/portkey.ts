/**
 * The peer: Portkey's open-source gateway (npm `@portkey-ai/gateway`, the
 * version scripts/install-portkey installs), in its own process with its
 * defaults, and a check that a target forwards the vendor's own answer.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { stopTied, spawnTied, type TiedChild } from '../../scripts/lib/children.js';
import { waitForPort } from '../../scripts/lib/temporal-dev-server.js';
import { freePort } from '../../test/helpers/ports.js';
import { body, type Target } from '../lib/gateway-targets.js';
import { ROOT } from '../lib/scratch.js';

export const PORTKEY_VERSION = '1.15.2';

export type Portkey = Awaited<ReturnType<typeof startPortkey>>;

/** Portkey's gateway from the cache (scripts/install-portkey), on a free port, with its defaults. */
export async function startPortkey(): Promise<{
  url: string;
  pid: number;
  /** What it wrote to stderr: line count and the first lines. */
  stderr: { lines: number; first: string[] };
  stop(): Promise<void>;
}> {
  const install = spawnSync('bash', [path.join(ROOT, 'scripts/install-portkey')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (install.status !== 0) throw new Error(`scripts/install-portkey failed (exit ${install.status})`);
  const entry = install.stdout.trim().split('\n').at(-1)!;
  const port = await freePort();
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // nothing of ours (a loader) in its process
  const tied: TiedChild = spawnTied(process.execPath, [entry, `--port=${port}`], {
    cwd: path.dirname(path.dirname(entry)),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its start-up banner clears the terminal and spins: kept out of the report.
  tied.child.stdout!.resume();
  const stderr = { lines: 0, first: [] as string[] };
  tied.child.stderr!.setEncoding('utf8');
  tied.child.stderr!.on('data', (d: string) => {
    for (const line of d.split('\n')) {
      if (!line.trim()) continue;
      stderr.lines++;
      if (stderr.first.length < 12) stderr.first.push(line);
    }
  });
  await Promise.race([
    waitForPort('127.0.0.1', port, 30_000),
    tied.exited.then((e) => {
      throw new Error(`portkey exited at start-up: ${JSON.stringify(e)}; stderr: ${stderr.first.join('\n')}`);
    }),
  ]);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: tied.child.pid!,
    stderr,
    stop: () => stopTied(tied, 'SIGTERM', 5_000),
  };
}

/** One request; its assistant text (a stream's deltas joined), to compare with the vendor's own answer. */
export async function answer(
  t: Target,
  stream: boolean,
): Promise<{ status: number; text: string; raw: string }> {
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: body(t.model, stream) });
  const raw = await res.text();
  let text = '';
  try {
    if (!stream) {
      text =
        (JSON.parse(raw) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message
          ?.content ?? '';
    } else {
      for (const line of raw.split('\n')) {
        const data = line.startsWith('data: ') ? line.slice(6).trim() : '';
        if (!data || data === '[DONE]') continue;
        text +=
          (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta
            ?.content ?? '';
      }
      if (!raw.includes('data: [DONE]')) text += ' (no [DONE])';
    }
  } catch {
    text = '(unparsable)';
  }
  return { status: res.status, text, raw };
}
