/**
 * Builds the server image (scripts/image/build.sh, a no-op when up to date)
 * and runs its containers as the Helm chart runs its pods: read-only root
 * filesystem with a tmpfs /tmp, uid/gid 1000, every capability dropped, no new
 * privileges. Host networking, because dockerd here runs with --bridge=none
 * and the run's PostgreSQL, Temporal dev server and scripted vendor listen on
 * loopback. Every container started is removed by removeAll().
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;
export const IMAGE = `agent-server:${VERSION}`;

/** The chart's podSecurityContext and securityContext, as `docker run` flags. */
export const AS_THE_CHART = [
  '--read-only',
  '--tmpfs',
  '/tmp',
  '--user',
  '1000:1000',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--network',
  'host',
];

export interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

/** `docker <args>`; a non-zero exit is returned, not thrown. */
export async function docker(args: string[], timeoutMs = 120_000): Promise<Output> {
  try {
    const { stdout, stderr } = await exec('docker', args, { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== 'number') throw err; // docker missing, or killed by the timeout
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

/** Why the tests cannot run here, or undefined. Under CI=true a missing engine is an error. */
export async function dockerUnavailable(): Promise<string | undefined> {
  const reason = await docker(['info', '--format', '{{.ServerVersion}}'], 30_000).then(
    (r) => (r.code === 0 ? undefined : r.stderr.trim()),
    (err: Error) => err.message,
  );
  if (reason === undefined) return undefined;
  if (process.env.CI === 'true') throw new Error(`CI=true: the server image tests must run, but ${reason}`);
  console.warn(`\n*** SKIPPING server image tests: Docker engine unreachable (${reason}) ***\n`);
  return reason;
}

/** Builds the image when missing or stale (minutes the first time on a machine); returns build.sh's last line. */
export async function buildImage(): Promise<string> {
  const { stderr } = await exec('bash', ['scripts/node-env.sh', 'bash', 'scripts/image/build.sh'], {
    cwd: ROOT,
    timeout: 15 * 60_000,
    maxBuffer: 64 << 20,
  });
  return stderr.trim().split('\n').pop() ?? '';
}

const envFlags = (env: Record<string, string>) =>
  Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);

/** Containers of one test file, named after it so that a leftover says where it came from. */
export class Containers {
  private readonly names: string[] = [];
  private readonly prefix = `agent-image-test-${randomUUID().slice(0, 8)}`;

  private name(role: string): string {
    const name = `${this.prefix}-${role}-${this.names.length}`;
    this.names.push(name);
    return name;
  }

  /** A one-shot role (migrate), in the foreground. */
  run(role: string, env: Record<string, string>): Promise<Output> {
    return docker(['run', '--rm', '--name', this.name(role), ...AS_THE_CHART, ...envFlags(env), IMAGE, role]);
  }

  /** `node -e <code>` in the image with its own user and environment (no chart flags). */
  node(code: string): Promise<Output> {
    return docker([
      'run',
      '--rm',
      '--name',
      this.name('node'),
      '--network',
      'none',
      '--entrypoint',
      'node',
      IMAGE,
      '-e',
      code,
    ]);
  }

  /** A long-running role (api, worker), detached; returns the container's name. */
  async start(role: string, env: Record<string, string>): Promise<string> {
    const name = this.name(role);
    const r = await docker(['run', '-d', '--name', name, ...AS_THE_CHART, ...envFlags(env), IMAGE, role]);
    if (r.code !== 0) throw new Error(`docker run ${role} failed: ${r.stderr}`);
    return name;
  }

  async logs(name: string): Promise<string> {
    const r = await docker(['logs', name]);
    return r.stdout + r.stderr;
  }

  async removeAll(): Promise<void> {
    if (this.names.length) await docker(['rm', '-f', '-v', ...this.names]).catch(() => undefined);
  }
}

/** Polls `fn` until it returns a value; the error names what was awaited and `detail()` (e.g. the logs). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  detail: () => Promise<string>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${await detail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
