/**
 * Life-cycle rules (docs/interface.md#sandbox-life-cycle) on a real engine: idle shutdown then a new container
 * on the same workspace, concurrent ensure from separate OS processes, and the
 * reaper.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL, sandboxName, sessionHash } from '../../../activities/sandbox/sandbox-manager.js';
import { SandboxReaper } from '../../../activities/sandbox/sandbox-reaper.js';
import {
  buildImage,
  cleanup,
  docker,
  dockerUnavailableReason,
  labelFilter,
  makeManager,
  newSession,
  silentLogger,
  TEST_LABELS,
  testConfig,
  waitFor,
} from './docker-harness.js';

const run = promisify(execFile);
const unavailable = await dockerUnavailableReason();

describe.skipIf(unavailable !== undefined)('docker sandbox life cycle', () => {
  beforeAll(() => buildImage(), 20 * 60_000);
  afterAll(cleanup);

  it('stops when idle; the next call gets a new container with the workspace kept and /tmp fresh', async () => {
    const { manager } = makeManager({ SANDBOX_IDLE_TIMEOUT_MS: '1500' });
    const session = newSession();
    const first = await manager.ensure(session);
    await manager.exec(session, { command: 'echo persisted > work.txt && echo gone > /tmp/scratch.txt' });

    await waitFor(
      async () => !(await docker.getContainer(first.id).inspect()).State.Running,
      15_000,
      'idle shutdown',
    );
    const stopped = await docker.getContainer(first.id).inspect();
    expect(stopped.State.ExitCode).toBe(0); // a clean exit, not a kill

    const r = await manager.exec(session, { command: 'cat work.txt; cat /tmp/scratch.txt 2>&1 || true' });
    const second = await manager.ensure(session);
    expect(second.id).not.toBe(first.id);
    expect(r.stdout).toBe('persisted\ncat: /tmp/scratch.txt: No such file or directory\n');
    // The stopped container was removed, not left beside the new one.
    const all = await docker.listContainers({
      all: true,
      filters: labelFilter([`${LABEL.session}=${sessionHash(session)}`]),
    });
    expect(all.map((c) => c.Id)).toEqual([second.id]);
  });

  it('ten simultaneous ensures from two OS processes create exactly one container', async () => {
    const session = newSession();
    const config = testConfig();
    const env = {
      ...process.env,
      SANDBOX_ENABLED: 'true',
      SANDBOX_HOST_DIR: config.hostDir,
      DATA_DIR: config.dataDir,
      SANDBOX_TOKEN_SECRET: config.tokenSecret,
      SANDBOX_POOL_SIZE: String(config.poolSize),
    };
    const startAt = Date.now() + 2500; // both processes loaded before the race begins
    const worker = path.join(import.meta.dirname, 'ensure-worker.ts');
    const spawnOne = () =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          worker,
          JSON.stringify(session),
          String(startAt),
          '5',
          JSON.stringify(TEST_LABELS),
        ],
        { env, cwd: path.resolve(import.meta.dirname, '../../..') },
      );
    const outputs = await Promise.all([spawnOne(), spawnOne()]);
    const results = outputs.flatMap((o) => JSON.parse(o.stdout) as Array<{ id: string; created: boolean }>);

    expect(results).toHaveLength(10);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const containers = await docker.listContainers({
      all: true,
      filters: labelFilter([`${LABEL.session}=${sessionHash(session)}`]),
    });
    expect(containers).toHaveLength(1);
    expect(containers[0]?.Names).toEqual([`/${sandboxName(session)}`]);
  });

  it('reaper destroys sandboxes of deleted conversations and releases idle ones', async () => {
    const { manager } = makeManager({ SANDBOX_IDLE_TIMEOUT_MS: '1000' });
    const deleted = newSession();
    const idle = newSession();
    const busy = newSession();
    await Promise.all([manager.ensure(deleted), manager.ensure(idle)]);
    await manager.writeFile(idle, 'note.txt', 'still here');
    await waitFor(
      async () =>
        (await manager.list()).filter((i) => i.name === sandboxName(idle) && i.state === 'stopped').length ===
        1,
      15_000,
      'idle stop',
    );
    const { manager: longLived } = makeManager({ SANDBOX_IDLE_TIMEOUT_MS: '600000' });
    await longLived.ensure(busy);

    const reaper = new SandboxReaper({
      manager,
      logger: silentLogger,
      idleMs: 200,
      isConversationLive: (s) => Promise.resolve(s.conversationId !== deleted.conversationId),
      now: () => Date.now() + 1000, // everything stopped is "long" stopped
    });
    await new Promise((r) => setTimeout(r, 300));
    await longLived.exec(busy, { command: 'true' }); // busy was just used: not idle past the limit
    const report = await reaper.runOnce();

    expect(report.destroyed).toContain(sandboxName(deleted));
    expect(report.released).toContain(sandboxName(idle));
    expect(report.released).not.toContain(sandboxName(busy));
    await expect(docker.getVolume(`${sandboxName(deleted)}-workspace`).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    await expect(docker.getContainer(sandboxName(idle)).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await docker.getContainer(sandboxName(busy)).inspect()).State.Running).toBe(true);
    // The idle session's workspace outlives the reaper and returns with its next call.
    expect((await manager.readFile(idle, 'note.txt')).toString()).toBe('still here');
  });
});
