/** Starts an in-process daemon on 127.0.0.1:<random> over a fresh temp root, for the daemon tests. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadDaemonConfig, type DaemonConfig } from '../../../sandbox-daemon/config.js';
import { createDaemon, type Daemon } from '../../../sandbox-daemon/server.js';

export const TOKEN = 'test-token-0123456789abcdef';

export interface Harness {
  daemon: Daemon;
  root: string;
  base: string;
  call(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  exec(body: Record<string, unknown>, kind?: 'bash' | 'python'): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startHarness(
  overrides: Partial<DaemonConfig> = {},
  env: Record<string, string> = {},
): Promise<Harness> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sbx-daemon-')));
  const root = path.join(parent, 'workspace');
  const config = {
    ...loadDaemonConfig({ SANDBOX_TOKEN: TOKEN, SANDBOX_ROOT: root }),
    host: '127.0.0.1',
    port: 0,
    idleTimeoutMs: 0,
    ...overrides,
  };
  const daemon = await createDaemon(config, {
    env: { PATH: process.env.PATH ?? '', SANDBOX_TOKEN: TOKEN, ...env },
  });
  const base = daemon.address;
  const call = (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(base + urlPath, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...headers },
      body:
        body === undefined
          ? undefined
          : body instanceof Uint8Array || typeof body === 'string'
            ? body
            : JSON.stringify(body),
    });
  return {
    daemon,
    root,
    base,
    call,
    async exec(body, kind = 'bash') {
      const res = await call('POST', `/exec/${kind}`, body, { 'content-type': 'application/json' });
      return { status: res.status, ...((await res.json()) as Record<string, unknown>) };
    },
    async stop() {
      await daemon.close();
      await rm(parent, { recursive: true, force: true });
    },
  };
}
