/**
 * Shared set-up of the Docker sandbox tests: probes the engine (skip loudly on
 * a laptop without it, fail under CI=true), builds the image when missing or
 * stale (build.sh is a no-op when up to date), and hands out managers whose
 * containers and volumes carry labels that cleanup() removes.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { DockerSandboxManager } from '../../../activities/sandbox/docker/manager.js';
import { loadSandboxConfig, type SandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import type { SandboxSession } from '../../../activities/sandbox/sandbox-manager.js';

export const repoRoot = path.resolve(import.meta.dirname, '../../..');
export const TEST_SECRET = 'test-secret-for-sandbox-tokens-0123456789';
export const RUN_ID = randomUUID().slice(0, 8);
export const TEST_LABELS = { 'agent-server.test': '1', 'agent-server.test-run': RUN_ID };

export const docker = new Docker();

export const silentLogger = { info() {}, warn() {}, error() {} } as never;

/** Resolves to undefined when Docker answers, else the reason. Under CI=true an unreachable engine is an error. */
export async function dockerUnavailableReason(): Promise<string | undefined> {
  try {
    await docker.ping();
    return undefined;
  } catch (err) {
    const reason = `Docker engine unreachable (${(err as Error).message}); start dockerd --bridge=none --iptables=false`;
    if (process.env.CI === 'true')
      throw new Error(`CI=true: the Docker sandbox tests must run, but ${reason}`, { cause: err });
    console.warn(`\n*** SKIPPING Docker sandbox tests: ${reason} ***\n`);
    return reason;
  }
}

/** Builds agent-sandbox:<version> when absent or stale; minutes the first time on a machine, under a second after. */
export function buildImage(): void {
  execFileSync('bash', [path.join(repoRoot, 'sandbox-daemon/image/build.sh')], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 15 * 60_000,
  });
}

export function newSession(): SandboxSession {
  return { projectId: randomUUID(), agentId: randomUUID(), conversationId: randomUUID() };
}

export interface TestManager {
  manager: DockerSandboxManager;
  config: SandboxConfig;
}

const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'sbx-it-'));

export function testConfig(env: Record<string, string> = {}): SandboxConfig {
  return loadSandboxConfig({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'docker',
    SANDBOX_HOST_DIR: path.join(tmpRoot, 'hosts'),
    DATA_DIR: path.join(tmpRoot, 'data'),
    SANDBOX_TOKEN_SECRET: TEST_SECRET,
    SANDBOX_READY_TIMEOUT_MS: '20000',
    // The pool has its own tests (docker-pool.test.ts); the others exercise the plain create path.
    SANDBOX_POOL_SIZE: '0',
    ...env,
  });
}

export function makeManager(env: Record<string, string> = {}): TestManager {
  const config = testConfig(env);
  return {
    manager: new DockerSandboxManager(config, silentLogger, TEST_SECRET, {
      docker,
      extraLabels: TEST_LABELS,
    }),
    config,
  };
}

export function labelFilter(extra: string[] = []): string {
  return JSON.stringify({ label: [`agent-server.test-run=${RUN_ID}`, ...extra] });
}

export async function cleanup(): Promise<void> {
  const containers = await docker.listContainers({ all: true, filters: labelFilter() });
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  const { Volumes } = await docker.listVolumes({ filters: labelFilter() });
  await Promise.all(
    (Volumes ?? []).map((v) =>
      docker
        .getVolume(v.Name)
        .remove()
        .catch(() => {}),
    ),
  );
  await rm(tmpRoot, { recursive: true, force: true });
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
