/**
 * While another process's `docker create` of a sandbox is in progress, Docker
 * has reserved the name but the container does not exist yet: inspect says
 * 404 and create says 409 (seen on a real engine: 35 ms when idle; on a
 * loaded engine long enough for the ten-racer test in
 * test/integration/sandbox/docker-pool.test.ts to use up its eight rounds in
 * a CI run). ensure must wait
 * for that container instead of spending its rounds in a tight loop. The
 * engine here is a stand-in answering as Docker does in that window; the
 * daemon is a real HTTP server on the Unix socket the manager polls.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type Docker from 'dockerode';
import { DockerSandboxManager } from '../../../activities/sandbox/docker/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { sandboxName, type SandboxSession } from '../../../activities/sandbox/sandbox-manager.js';

const silent = { info() {}, warn() {}, error() {} } as never;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sbx-reserved-'));
const session: SandboxSession = { projectId: 'p1', agentId: 'a1', conversationId: 'c1' };
const name = sandboxName(session);
const peerId = 'f'.repeat(64);
let daemon: http.Server;

beforeAll(async () => {
  // The peer's daemon, listening where a container created for this session puts its socket.
  const dir = path.join(tmp, 'hosts', name);
  mkdirSync(dir, { recursive: true });
  daemon = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ idle_ms: 0, running: 0 }));
  });
  await new Promise<void>((resolve) => daemon.listen(path.join(dir, 'daemon.sock'), resolve));
});
afterAll(() => {
  daemon.close();
  rmSync(tmp, { recursive: true, force: true });
});

const statusError = (statusCode: number) => Object.assign(new Error(`HTTP ${statusCode}`), { statusCode });

/** An engine on which a peer's create of `name` holds the name until `appearsAt`, then shows its running container. */
function engineWithPeerCreating(appearsAt: () => number) {
  const calls = { inspect: 0, create: 0 };
  const info = {
    Id: peerId,
    State: { Running: true, Paused: false, Restarting: false, Status: 'running', ExitCode: 0 },
    Mounts: [{ Destination: '/sandbox/run', Source: path.join(tmp, 'hosts', name) }],
    Config: { Labels: {} },
  };
  const engine = {
    getContainer: () => ({
      inspect: () => {
        calls.inspect++;
        return Date.now() < appearsAt() ? Promise.reject(statusError(404)) : Promise.resolve(info);
      },
      start: () => Promise.reject(statusError(304)),
    }),
    createVolume: () => Promise.resolve({}),
    createContainer: () => {
      calls.create++;
      return Promise.reject(statusError(409));
    },
    listContainers: () => Promise.resolve([]),
  };
  return { engine: engine as unknown as Docker, calls };
}

function manager(engine: Docker, readyTimeoutMs: number) {
  const config = loadSandboxConfig({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'docker',
    SANDBOX_HOST_DIR: path.join(tmp, 'hosts'),
    DATA_DIR: path.join(tmp, 'data'),
    SANDBOX_TOKEN_SECRET: 'test-secret-for-sandbox-tokens-0123456789',
    SANDBOX_READY_TIMEOUT_MS: String(readyTimeoutMs),
    SANDBOX_POOL_SIZE: '0',
  });
  return new DockerSandboxManager(config, silent, config.tokenSecret ?? '', { docker: engine });
}

describe('docker sandbox: a name reserved by a peer’s create in progress', () => {
  it('is waited for (with backoff, not a tight loop) and the peer’s container adopted', async () => {
    const started = Date.now();
    const { engine, calls } = engineWithPeerCreating(() => started + 1_500);
    const handle = await manager(engine, 20_000).ensure(session);
    expect(handle).toMatchObject({ id: peerId, created: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    // Eight rounds used to go by in a few milliseconds; backing off to 500 ms makes about ten creates in 1.5 s.
    expect(calls.create).toBeGreaterThan(2);
    expect(calls.create).toBeLessThan(30);
  });

  it('gives up after its deadline and the rounds, saying what it saw', async () => {
    const { engine, calls } = engineWithPeerCreating(() => Number.POSITIVE_INFINITY);
    const started = Date.now();
    const err = await manager(engine, 300)
      .ensure(session)
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /could not be settled after 8 attempts; seen: absent, name reserved by a create in progress ×\d+$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(calls.create).toBeGreaterThan(8);
  });
});
