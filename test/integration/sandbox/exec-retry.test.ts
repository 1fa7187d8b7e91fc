/**
 * Safe retries of a sandbox command (issue #7), through the manager, on the
 * process backend and (when an engine answers) the docker backend: a command
 * sent with an execution id runs once however often it is re-sent; after the
 * sandbox was recreated, `attachOnly` says the execution is unknown instead of
 * running it again; a connection that breaks mid-command is never resent.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonRequest } from '../../../activities/sandbox/daemon-client.js';
import {
  NON_RETRYABLE_SANDBOX_ERRORS,
  SandboxExecutionUnknownError,
  SandboxRequestError,
  SandboxUnavailableError,
} from '../../../activities/sandbox/errors.js';
import { ProcessSandboxManager } from '../../../activities/sandbox/process/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import type {
  SandboxHandle,
  SandboxManager,
  SandboxSession,
} from '../../../activities/sandbox/sandbox-manager.js';
import {
  buildImage,
  cleanup,
  docker,
  dockerUnavailableReason,
  makeManager,
  newSession,
  repoRoot,
  silentLogger,
  TEST_SECRET,
} from './docker-harness.js';

interface Backend {
  manager: SandboxManager;
  /** Kills the sandbox's daemon as a crash would (no clean answer to requests in flight). */
  crash(handle: SandboxHandle): Promise<void>;
  teardown(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function processBackend(): Promise<Backend> {
  execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-retry-'));
  const config = loadSandboxConfig({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'process',
    DATA_DIR: dir,
    SANDBOX_IDLE_TIMEOUT_MS: '600000',
  });
  const manager = new ProcessSandboxManager(config, silentLogger, TEST_SECRET);
  return {
    manager,
    crash: async (handle) => {
      process.kill(Number(handle.id), 'SIGKILL');
      await sleep(100);
    },
    teardown: async () => {
      for (const info of await manager.list()) await manager.destroy(info.session);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function dockerBackend(): Promise<Backend> {
  buildImage();
  const { manager } = makeManager({ SANDBOX_IDLE_TIMEOUT_MS: '600000' });
  return Promise.resolve({
    manager,
    crash: async (handle) => {
      await docker.getContainer(handle.id).kill();
    },
    teardown: async () => {
      await manager.close();
      await cleanup();
    },
  });
}

const dockerUnavailable = await dockerUnavailableReason();

describe.each([
  { name: 'process', make: processBackend, skip: false },
  { name: 'docker', make: dockerBackend, skip: dockerUnavailable !== undefined },
])('exec retries ($name backend)', ({ make, skip }) => {
  let b: Backend;
  let m: SandboxManager;
  beforeAll(async () => {
    if (skip) return;
    b = await make();
    m = b.manager;
  }, 20 * 60_000);
  afterAll(async () => b?.teardown());

  const lines = async (session: SandboxSession, file: string) =>
    (await m.exec(session, { command: `cat ${file} 2>/dev/null || true` })).stdout
      .split('\n')
      .filter(Boolean);

  it.skipIf(skip)('a re-sent command attaches to the running one after its caller went away', async () => {
    const session = newSession();
    const handle = await m.ensure(session);
    const command = 'echo run >> a.log; sleep 1.5; echo finished';
    const id = 'run-a:1:call_1';
    // The worker dies mid-command: its HTTP call is cut off while the command runs.
    const cut = daemonRequest(handle.endpoint, {
      method: 'POST',
      path: '/exec/bash',
      token: handle.token,
      body: JSON.stringify({ command, id, timeout: 30 }),
      contentType: 'application/json',
      timeoutMs: 400,
    });
    await expect(cut).rejects.toBeInstanceOf(SandboxUnavailableError);
    // The retried activity sends the same execution again: it waits for the same run.
    const retried = await m.exec(session, { command, id, timeout: 30 });
    expect(retried).toMatchObject({ stdout: 'finished\n', exit_code: 0, reused: true });
    // And once more after it finished, with attachOnly: the kept result.
    const attached = await m.exec(session, { command, id, timeout: 30, attachOnly: true });
    expect(attached).toEqual(retried);
    expect(await lines(session, 'a.log')).toEqual(['run']);

    // Another command under the same id is refused, not run.
    const conflict = await m.exec(session, { command: 'echo other >> a.log', id }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(SandboxRequestError);
    expect(conflict).toMatchObject({ status: 409, code: 'execution_conflict' });
    expect(await lines(session, 'a.log')).toEqual(['run']);
  });

  it.skipIf(skip)('attachOnly to a recreated sandbox throws SandboxExecutionUnknownError', async () => {
    const session = newSession();
    const command = 'echo run >> b.log';
    const id = 'run-b:1:call_1';
    expect((await m.exec(session, { command, id })).reused).toBeUndefined();
    expect(await m.exec(session, { command, id, attachOnly: true })).toMatchObject({ reused: true });

    await m.release(session); // what idle shutdown does
    const err = await m.exec(session, { command, id, attachOnly: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxExecutionUnknownError);
    expect(err).toMatchObject({ executionId: id, permanent: true, name: 'SandboxExecutionUnknownError' });
    expect((err as Error).message).toContain(`no execution "${id}"`);
    expect(NON_RETRYABLE_SANDBOX_ERRORS).toContain('SandboxExecutionUnknownError');
    // Python requests carry the same fields.
    await expect(
      m.execPython(session, { script: 'print(1)', id: 'py-1', attachOnly: true }),
    ).rejects.toBeInstanceOf(SandboxExecutionUnknownError);
    expect(await lines(session, 'b.log')).toEqual(['run']);
  });

  it.skipIf(skip)(
    'a connection broken mid-command is not resent; the retry finds a new sandbox that does not know it',
    async () => {
      const session = newSession();
      const handle = await m.ensure(session);
      const command = 'echo run >> c.log; sleep 1';
      const id = 'run-c:1:call_1';
      const inFlight = m.exec(session, { command, id }).catch((e: unknown) => e);
      await sleep(400);
      await b.crash(handle);
      // The request had reached the daemon: the manager must not resend it to a recreated sandbox.
      const err = await inFlight;
      expect(err).toBeInstanceOf(SandboxUnavailableError);
      await sleep(1_000);
      // The cached handle is stale: the manager recreates the sandbox, which has never heard of the id.
      await expect(m.exec(session, { command, id, attachOnly: true })).rejects.toBeInstanceOf(
        SandboxExecutionUnknownError,
      );
      expect((await m.ensure(session)).id).not.toBe(handle.id);
      expect(await lines(session, 'c.log')).toEqual(['run']);
    },
  );
});
