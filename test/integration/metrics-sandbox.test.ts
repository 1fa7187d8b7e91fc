/**
 * Sandbox metrics from real sandboxes: with the process backend (no Docker
 * needed) ensure timed and counted once per backend round, cold starts,
 * command durations with timeouts as errors, the reaper's running count;
 * with Docker, a claim from the pool and the pool gauges.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonHealth } from '../../activities/sandbox/daemon-client.js';
import { poolVolumeName } from '../../activities/sandbox/docker/pool.js';
import { LABEL } from '../../activities/sandbox/sandbox-manager.js';
import { ProcessSandboxManager } from '../../activities/sandbox/process/manager.js';
import { loadSandboxConfig } from '../../activities/sandbox/sandbox-config.js';
import { SandboxReaper } from '../../activities/sandbox/sandbox-reaper.js';
import { loadConfig } from '../../core/config.js';
import { installMetrics, metrics, type MetricsRegistry } from '../../core/telemetry/metrics.js';
import { parsePrometheusText, sumOf } from '../helpers/prometheus-text.js';
import {
  buildImage,
  cleanup,
  docker,
  dockerUnavailableReason,
  labelFilter,
  makeManager,
  newSession,
  repoRoot,
  silentLogger,
  TEST_SECRET,
  waitFor,
} from './sandbox/docker-harness.js';

const noDocker = await dockerUnavailableReason();

let dir: string;
let manager: ProcessSandboxManager;
let registry: MetricsRegistry;

beforeAll(async () => {
  registry = installMetrics('worker', loadConfig({}))!;
  execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-metrics-'));
  manager = new ProcessSandboxManager(
    loadSandboxConfig({ SANDBOX_ENABLED: 'true', SANDBOX_BACKEND: 'process', DATA_DIR: dir }),
    silentLogger,
    TEST_SECRET,
  );
});
afterAll(async () => {
  for (const info of await manager.list()) await manager.destroy(info.session);
  await rm(dir, { recursive: true, force: true });
});

it('counts ensure rounds, cold starts, commands and running sandboxes', async () => {
  const session = newSession();
  // Two concurrent callers share one backend round: one cold start, timed once.
  await Promise.all([manager.ensure(session), manager.ensure(session)]);
  await manager.ensure(session);
  expect((await manager.exec(session, { command: 'exit 3' })).exit_code).toBe(3);
  expect((await manager.exec(session, { command: 'sleep 5', timeout: 0.2 })).timed_out).toBe(true);
  const reaper = new SandboxReaper({
    manager,
    idleMs: 3_600_000,
    logger: silentLogger,
    isConversationLive: () => Promise.resolve(true),
  });
  const unobserve = metrics().sandbox.observe({ backend: 'process', running: () => reaper.lastRunning });
  await reaper.runOnce();

  const families = parsePrometheusText(await registry.scrape());
  unobserve();
  const backend = { agent_server_sandbox_backend: 'process' };
  const ensure = 'agent_server_sandbox_ensure_duration_seconds_count';
  expect(sumOf(families, ensure, { ...backend, agent_server_sandbox_ensure_result: 'created' })).toBe(1);
  expect(sumOf(families, ensure, { ...backend, agent_server_sandbox_ensure_result: 'existing' })).toBe(1);
  expect(sumOf(families, 'agent_server_sandbox_cold_starts_total', backend)).toBe(1);
  expect(families.has('agent_server_sandbox_pool_claims_total')).toBe(false);
  const command = 'agent_server_sandbox_command_duration_seconds_count';
  expect(sumOf(families, command, { ...backend, error_type: undefined })).toBe(1);
  expect(sumOf(families, command, { ...backend, error_type: 'timeout' })).toBe(1);
  expect(sumOf(families, 'agent_server_sandbox_running', backend)).toBe(1);
});

describe.skipIf(noDocker !== undefined)('docker pool', () => {
  beforeAll(() => buildImage(), 20 * 60_000);
  afterAll(cleanup);

  it('counts a claim from the pool (not a cold start) and reports the pool gauges', async () => {
    const { manager, config } = makeManager({
      SANDBOX_POOL_SIZE: '1',
      SANDBOX_INSTALLATION: `metrics-${Date.now()}`,
    });
    const unobserve = metrics().sandbox.observe({
      backend: 'docker',
      running: () => undefined,
      pool: () => manager.poolStats(),
    });
    try {
      await manager.pool.fill();
      await waitFor(
        async () => {
          const slots = await docker.listContainers({
            filters: labelFilter([LABEL.pool, `${LABEL.installation}=${config.installation}`]),
          });
          const poolId = slots[0]?.Labels[LABEL.pool];
          if (!poolId) return false;
          const socketPath = path.join(config.hostDir, poolVolumeName(poolId), 'daemon.sock');
          return (await daemonHealth({ kind: 'unix', socketPath }, 1000))?.pool === 'waiting';
        },
        20_000,
        'a waiting pool sandbox',
      );
      const before = parsePrometheusText(await registry.scrape());
      const handle = await manager.ensure(newSession());
      expect(handle.pooled).toBe(true);
      const after = parsePrometheusText(await registry.scrape());
      const onDocker = { agent_server_sandbox_backend: 'docker' };
      const rose = (name: string, match: Record<string, string>) =>
        sumOf(after, name, match) - sumOf(before, name, match);
      expect(rose('agent_server_sandbox_pool_claims_total', onDocker)).toBe(1);
      expect(rose('agent_server_sandbox_cold_starts_total', onDocker)).toBe(0);
      expect(
        rose('agent_server_sandbox_ensure_duration_seconds_count', {
          ...onDocker,
          agent_server_sandbox_ensure_result: 'pool',
        }),
      ).toBe(1);
      expect(sumOf(after, 'agent_server_sandbox_pool_limit', onDocker)).toBe(1);
      // As the claim listed it: the one waiting sandbox it then took.
      expect(after.get('agent_server_sandbox_pool_size')?.samples).toHaveLength(1);
    } finally {
      unobserve();
      await manager.close();
    }
  });
});
