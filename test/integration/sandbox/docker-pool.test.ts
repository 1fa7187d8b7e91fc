/**
 * The pool of pre-started sandboxes on a real engine: a new session claims
 * one, keeps its own workspace through idle shutdown and recreation, stays
 * one container under concurrent ensure from two OS processes, and destroy,
 * close and the installation label clean up only what is theirs.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonHealth } from '../../../activities/sandbox/daemon-client.js';
import type { DockerSandboxManager } from '../../../activities/sandbox/docker/manager.js';
import { poolVolumeName } from '../../../activities/sandbox/docker/pool.js';
import { SandboxFileNotFoundError } from '../../../activities/sandbox/errors.js';
import { LABEL, sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
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
  waitFor,
} from './docker-harness.js';

const run = promisify(execFile);
const unavailable = await dockerUnavailableReason();

async function waitingSlots(installation: string) {
  return docker.listContainers({
    filters: labelFilter([LABEL.pool, `${LABEL.installation}=${installation}`]),
  });
}

/** Fills the pool and waits until every slot's daemon answers. */
async function poolReady(manager: DockerSandboxManager, size: number): Promise<void> {
  await manager.pool.fill();
  const installation = manager['config'].installation;
  await waitFor(
    async () => {
      const slots = (await waitingSlots(installation)).filter((c) => c.Names[0]?.includes('-pool-'));
      if (slots.length < size) return false;
      const healthy = await Promise.all(
        slots.map((c) =>
          daemonHealth(
            {
              kind: 'unix',
              socketPath: path.join(
                manager['config'].hostDir,
                poolVolumeName(c.Labels[LABEL.pool]!),
                'daemon.sock',
              ),
            },
            1000,
          ),
        ),
      );
      return healthy.every((h) => h?.pool === 'waiting');
    },
    20_000,
    'pool sandboxes to be ready',
  );
}

describe.skipIf(unavailable !== undefined)('docker sandbox pool', () => {
  beforeAll(() => buildImage(), 20 * 60_000);
  afterAll(cleanup);

  it('a new session claims a waiting sandbox with its own workspace, kept through idle shutdown', async () => {
    const { manager } = makeManager({
      SANDBOX_POOL_SIZE: '1',
      SANDBOX_IDLE_TIMEOUT_MS: '1500',
      SANDBOX_INSTALLATION: 'pool-claim-test',
    });
    await poolReady(manager, 1);
    const a = newSession();
    const first = await manager.ensure(a);
    expect(first.created).toBe(true);
    const info = await docker.getContainer(first.id).inspect();
    expect(info.Name).toBe('/' + sandboxName(a));
    expect(info.Config.Labels[LABEL.pool]).toBeDefined(); // it came from the pool
    expect(info.HostConfig).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
    });
    await manager.exec(a, { command: 'echo mine > a.txt' });
    expect((await manager.list()).find((i) => i.name === sandboxName(a))?.session).toEqual(a);

    // The next session gets a fresh sandbox from the refilled pool: nothing of a's is visible.
    await poolReady(manager, 1);
    const b = newSession();
    const second = await manager.ensure(b);
    expect((await docker.getContainer(second.id).inspect()).Config.Labels[LABEL.pool]).toBeDefined();
    await expect(manager.readFile(b, 'a.txt')).rejects.toThrow(SandboxFileNotFoundError);
    expect((await manager.exec(b, { command: 'ls -A /sandbox/workspace | wc -l' })).stdout).toBe('0\n');

    // Idle shutdown, then a new (ordinary) container on the same files.
    await waitFor(
      async () => !(await docker.getContainer(first.id).inspect()).State.Running,
      15_000,
      'idle shutdown',
    );
    expect((await manager.exec(a, { command: 'cat a.txt' })).stdout).toBe('mine\n');
    const again = await manager.ensure(a);
    expect(again.id).not.toBe(first.id);
    expect((await docker.getContainer(again.id).inspect()).Config.Labels[LABEL.session]).toBeDefined();

    // destroy removes the container, the workspace alias and the pool volume behind it.
    await manager.destroy(a);
    await expect(docker.getVolume(`${sandboxName(a)}-workspace`).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    await expect(
      docker.getVolume(poolVolumeName(info.Config.Labels[LABEL.pool]!)).inspect(),
    ).rejects.toMatchObject({ statusCode: 404 });

    // close() removes the waiting sandboxes, never a session's.
    await manager.pool.fill();
    await manager.close();
    const left = await docker.listContainers({
      all: true,
      filters: labelFilter([`${LABEL.installation}=pool-claim-test`]),
    });
    expect(left.map((c) => c.Names[0])).toEqual([`/${sandboxName(b)}`]);
  });

  it("a pool-born session's workspace (an alias of the pool volume) copies to a fork's session, which then takes no pool sandbox", async () => {
    const { manager } = makeManager({ SANDBOX_POOL_SIZE: '1', SANDBOX_INSTALLATION: 'pool-copy-test' });
    await poolReady(manager, 1);
    const a = newSession();
    const born = await manager.ensure(a);
    expect(born.pooled).toBe(true);
    await manager.exec(a, { command: 'mkdir -p d && echo pooled > d/f.txt' });

    const fork = { ...a, conversationId: `${a.conversationId}-fork` };
    expect(await manager.copyWorkspace(a, fork)).toBe('copied');
    await poolReady(manager, 1); // a waiting pool sandbox the fork could have taken
    const forked = await manager.ensure(fork);
    expect(forked.pooled).toBeFalsy(); // its workspace exists: a container of its own mounts it
    expect((await manager.exec(fork, { command: 'cat d/f.txt' })).stdout).toBe('pooled\n');
    await manager.exec(fork, { command: 'echo fork > d/f.txt' });
    expect((await manager.exec(a, { command: 'cat d/f.txt' })).stdout).toBe('pooled\n');
    expect((await manager.list()).find((i) => i.name === sandboxName(fork))?.session).toEqual(fork);

    expect(await manager.copyWorkspace(newSession(), fork)).toBe('absent');
    await manager.destroy(fork);
    await manager.destroy(a);
    await manager.close();
  });

  it('ten simultaneous ensures from two OS processes with a pool make one container', async () => {
    const { manager, config } = makeManager({
      SANDBOX_POOL_SIZE: '2',
      SANDBOX_INSTALLATION: 'pool-race-test',
    });
    await poolReady(manager, 2);
    const session = newSession();
    const env = {
      ...process.env,
      SANDBOX_ENABLED: 'true',
      SANDBOX_HOST_DIR: config.hostDir,
      DATA_DIR: config.dataDir,
      SANDBOX_TOKEN_SECRET: config.tokenSecret,
      SANDBOX_POOL_SIZE: '2',
      SANDBOX_INSTALLATION: 'pool-race-test',
    };
    const startAt = Date.now() + 2500;
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
    const named = await docker.listContainers({
      all: true,
      filters: JSON.stringify({ name: [`^/${sandboxName(session)}$`] }),
    });
    expect(named.map((c) => c.Id)).toEqual([results[0]!.id]);
    // The one workspace is what the container mounts, and commands run there.
    await manager.writeFile(session, 'x.txt', 'x');
    expect((await manager.exec(session, { command: 'cat x.txt' })).stdout).toBe('x');
    await manager.destroy(session);
    await manager.close();
  });

  it('installations sharing an engine never list or reap each other’s sandboxes', async () => {
    const { manager: ours } = makeManager({ SANDBOX_INSTALLATION: 'install-a' });
    const { manager: theirs } = makeManager({ SANDBOX_INSTALLATION: 'install-b' });
    const s = newSession();
    const h = await ours.ensure(s);
    expect((await ours.list()).map((i) => i.name)).toContain(sandboxName(s));
    expect((await theirs.list()).map((i) => i.name)).not.toContain(sandboxName(s));
    const reaper = new SandboxReaper({
      manager: theirs,
      logger: silentLogger,
      idleMs: 1,
      isConversationLive: () => Promise.resolve(false),
    });
    const report = await reaper.runOnce();
    expect(report.destroyed).not.toContain(sandboxName(s));
    expect((await docker.getContainer(h.id).inspect()).State.Running).toBe(true);
    await ours.destroy(s);
  });
});
