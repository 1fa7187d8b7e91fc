/**
 * Sandbox benchmark on the real Docker engine (docker backend, network none):
 *   - cold start: ensure → first `true` result, over 20 fresh sessions, with the
 *     pool (SANDBOX_POOL_SIZE=2, the default; each session arrives once the pool
 *     has been refilled) and without it (SANDBOX_POOL_SIZE=0: what a session
 *     gets when a burst has emptied the pool, and what every recreation costs)
 *   - warm round trip: exec `true` on a live sandbox, 500 calls (fork server)
 *   - 1 MiB file write + read, 50 times
 * Baselines measured in the same run: a bare `docker create + start` of a
 * container running `true` to exit (the engine's floor for cold start), and
 * GET /health on the live daemon (the HTTP floor under exec).
 * Run: npx tsx bench/sandbox/sandbox.bench.ts   (builds the image if needed)
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { daemonHealth, daemonRequest } from '../../activities/sandbox/daemon-client.js';
import { DockerSandboxManager } from '../../activities/sandbox/docker/manager.js';
import { poolVolumeName } from '../../activities/sandbox/docker/pool.js';
import { loadSandboxConfig } from '../../activities/sandbox/sandbox-config.js';
import { LABEL, type SandboxSession } from '../../activities/sandbox/sandbox-manager.js';

const repo = path.resolve(import.meta.dirname, '../..');
const docker = new Docker();
const labels = { 'agent-server.bench': '1' };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sbx-bench-'));
const benchConfig = (poolSize: number) =>
  loadSandboxConfig({
    SANDBOX_ENABLED: 'true',
    SANDBOX_HOST_DIR: path.join(tmp, 'hosts'),
    DATA_DIR: tmp,
    SANDBOX_IDLE_TIMEOUT_MS: '600000',
    SANDBOX_POOL_SIZE: String(poolSize),
  });
const config = benchConfig(2);
const logger = { info() {}, warn() {}, error() {} } as never;
const secret = 'bench-secret-0123456789abcdef0123456789';
const manager = new DockerSandboxManager(config, logger, secret, { docker, extraLabels: labels });
const noPool = new DockerSandboxManager(benchConfig(0), logger, secret, { docker, extraLabels: labels });

function pct(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function report(name: string, samples: number[]): void {
  const f = (n: number) => n.toFixed(2).padStart(8);
  console.log(
    `${name.padEnd(42)} n=${String(samples.length).padStart(3)}  p50 ${f(pct(samples, 50))} ms  p95 ${f(pct(samples, 95))} ms  p99 ${f(pct(samples, 99))} ms`,
  );
}

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const session = (): SandboxSession => ({
  projectId: randomUUID(),
  agentId: randomUUID(),
  conversationId: randomUUID(),
});

async function cleanup(): Promise<void> {
  const filters = JSON.stringify({ label: ['agent-server.bench=1'] });
  for (const c of await docker.listContainers({ all: true, filters }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
  for (const v of (await docker.listVolumes({ filters })).Volumes ?? [])
    await docker
      .getVolume(v.Name)
      .remove()
      .catch(() => {});
}

async function main(): Promise<void> {
  execFileSync('bash', [path.join(repo, 'sandbox-daemon/image/build.sh')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await cleanup();
  console.log(
    `sandbox bench: image ${config.defaultImage}, network ${config.dockerNetwork}, ${os.cpus().length} CPUs, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );

  // Baseline: the engine's own create + start + wait of a container that runs `true`.
  const bare: number[] = [];
  for (let i = 0; i < 20; i++) {
    bare.push(
      await time(async () => {
        const c = await docker.createContainer({
          Image: config.defaultImage,
          Cmd: ['true'],
          Labels: labels,
          HostConfig: { NetworkMode: 'none' },
        });
        await c.start();
        await c.wait();
        await c.remove();
      }),
    );
  }
  report('baseline: docker create+start+wait `true`', bare);

  const sessions: SandboxSession[] = [];
  const coldNoPool: number[] = [];
  for (let i = 0; i < 20; i++) {
    const s = session();
    sessions.push(s);
    coldNoPool.push(await time(() => noPool.exec(s, { command: 'true' })));
  }
  report('cold start, no pool: ensure → first `true`', coldNoPool);

  const cold: number[] = [];
  for (let i = 0; i < 20; i++) {
    await poolWaiting(2);
    const s = session();
    sessions.push(s);
    cold.push(await time(() => manager.exec(s, { command: 'true' })));
  }
  report('cold start, pool: ensure → first `true`', cold);

  // A pool-born session, so the warm figures are what a session normally gets.
  const warmSession = sessions[sessions.length - 1]!;
  // The fork server starts with the daemon; give it a moment, as any session's second command would.
  await manager.exec(warmSession, { command: 'true' });
  await new Promise((r) => setTimeout(r, 500));
  const handle = await manager.ensure(warmSession);
  const health: number[] = [];
  for (let i = 0; i < 500; i++)
    health.push(
      await time(() => daemonRequest(handle.endpoint, { method: 'GET', path: '/health', timeoutMs: 5000 })),
    );
  report('baseline: GET /health round trip', health);

  const warm: number[] = [];
  for (let i = 0; i < 500; i++) warm.push(await time(() => manager.exec(warmSession, { command: 'true' })));
  report('warm round trip: exec `true`', warm);

  const mib = Buffer.alloc(1024 * 1024, 7);
  const writes: number[] = [];
  const reads: number[] = [];
  const both: number[] = [];
  for (let i = 0; i < 50; i++) {
    const w = await time(() => manager.writeFile(warmSession, 'bench/1mib.bin', mib));
    const r = await time(async () => {
      const back = await manager.readFile(warmSession, 'bench/1mib.bin');
      if (back.length !== mib.length) throw new Error('short read');
    });
    writes.push(w);
    reads.push(r);
    both.push(w + r);
  }
  report('1 MiB write', writes);
  report('1 MiB read', reads);
  report('1 MiB write + read', both);
  console.log(
    `\nload after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  for (const s of sessions) await manager.destroy(s);
  await manager.close();
}

/** Refills the pool and waits until its daemons answer: a session arriving now finds it ready. */
async function poolWaiting(size: number): Promise<void> {
  await manager.pool.fill();
  for (let i = 0; i < 200; i++) {
    const slots = await docker.listContainers({
      filters: JSON.stringify({ label: ['agent-server.bench=1', LABEL.pool], name: ['agent-sandbox-pool-'] }),
    });
    const ready = await Promise.all(
      slots.map((c) =>
        daemonHealth({
          kind: 'unix',
          socketPath: path.join(config.hostDir, poolVolumeName(c.Labels[LABEL.pool]!), 'daemon.sock'),
        }),
      ),
    );
    if (ready.filter((h) => h?.pool === 'waiting').length >= size) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the pool did not fill');
}

try {
  await main();
} finally {
  await cleanup();
  rmSync(tmp, { recursive: true, force: true });
}
