import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from './ports.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  /** SIGTERM, and resolves once the process has exited (its graceful shutdown done). */
  stop(): Promise<void>;
}

/**
 * The environment of a gateway-only API process on `databaseUrl` (no
 * Temporal: nothing converses), with a secrets key of its own and budget
 * leases short enough for a test: every replica spawned with the same
 * object shares that key and those settings.
 */
export function gatewayReplicaEnv(databaseUrl: string, leaseTtlMs = 3_000): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    GATEWAY_LEASE_MS: '500',
    GATEWAY_LEASE_TTL_MS: String(leaseTtlMs),
  };
}

/** The production API process (`npm run api`'s entry point) on a free port, resolved once it answers. */
export async function spawnApi(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  // Up to a minute: two processes compiling at once on a busy 2-core machine took 30 s.
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the API exited early (${child.exitCode})`);
    const up = await fetch(`${url}/api/agent-server/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { url, child, stop };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error('the API did not come up');
}

/** POSTs JSON to the configuration API at `baseUrl` and returns the envelope's `data`; throws on a non-200. */
export async function postConfig(
  baseUrl: string,
  route: string,
  body: unknown,
): Promise<Record<string, string>> {
  const res = await fetch(`${baseUrl}/api/agent-server${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: Record<string, string> };
  if (res.status !== 200) throw new Error(`${route}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}
