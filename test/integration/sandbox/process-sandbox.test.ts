/** The process backend (no isolation, for laptops without Docker): same contract, a local child process. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessSandboxManager } from '../../../activities/sandbox/process/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { newSession, repoRoot, silentLogger, TEST_SECRET, waitFor } from './docker-harness.js';

describe('process sandbox', () => {
  let dir: string;
  let manager: ProcessSandboxManager;
  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-proc-'));
    const config = loadSandboxConfig({
      SANDBOX_ENABLED: 'true',
      SANDBOX_BACKEND: 'process',
      DATA_DIR: dir,
      SANDBOX_IDLE_TIMEOUT_MS: '800',
    });
    manager = new ProcessSandboxManager(config, silentLogger, TEST_SECRET);
  });
  afterAll(async () => {
    for (const info of await manager.list()) await manager.destroy(info.session);
    await rm(dir, { recursive: true, force: true });
  });

  it('runs commands under $DATA_DIR/sandboxes/<name>/workspace and comes back after idle shutdown', async () => {
    const session = newSession();
    const first = await Promise.all([manager.ensure(session), manager.ensure(session)]);
    expect(first[0].id).toBe(first[1].id);
    const r = await manager.exec(session, { command: 'echo kept > f.txt; pwd' });
    expect(r.stdout).toBe(path.join(dir, 'sandboxes', first[0].name, 'workspace') + '\n');

    await waitFor(
      async () => (await manager.list()).some((i) => i.name === first[0].name && i.state === 'stopped'),
      10_000,
      'idle exit',
    );
    expect((await manager.exec(session, { command: 'cat f.txt' })).stdout).toBe('kept\n');
    expect((await manager.ensure(session)).id).not.toBe(first[0].id);

    await manager.destroy(session);
    expect(await manager.list()).toEqual([]);
  });
});
