/** Configuration and the disabled manager; no Docker needed. */
import { describe, expect, it } from 'vitest';
import {
  createSandboxManager,
  DisabledSandboxManager,
} from '../../../activities/sandbox/create-sandbox-manager.js';
import {
  NON_RETRYABLE_SANDBOX_ERRORS,
  SandboxConfigError,
  SandboxNotConfiguredError,
} from '../../../activities/sandbox/errors.js';
import {
  loadSandboxConfig,
  SANDBOX_VERSION,
  sandboxConfigSchema,
} from '../../../activities/sandbox/sandbox-config.js';
import { deriveToken, loadOrCreateTokenSecret } from '../../../activities/sandbox/sandbox-token.js';
import { mkdtemp, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newSession, silentLogger } from './docker-harness.js';

describe('sandbox configuration', () => {
  it('has safe defaults', () => {
    const c = loadSandboxConfig({});
    expect(c).toMatchObject({
      enabled: false,
      backend: 'docker',
      defaultImage: `agent-sandbox:${SANDBOX_VERSION}`,
      dockerNetwork: 'none',
      idleTimeoutMs: 30_000,
      limits: { memoryMb: 512, cpus: 1, pids: 256 },
    });
    expect(SANDBOX_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(sandboxConfigSchema.describe().keys).toHaveProperty('SANDBOX_DOCKER_NETWORK');
  });

  it('names the installation after its host folder unless told, and keeps a pool of 2 by default', () => {
    const a = loadSandboxConfig({ SANDBOX_HOST_DIR: '/srv/a/sandboxes' });
    expect(a).toMatchObject({ poolSize: 2, poolIdleTimeoutMs: 600_000 });
    expect(a.installation).toBe(loadSandboxConfig({ SANDBOX_HOST_DIR: '/srv/a/sandboxes' }).installation);
    expect(a.installation).not.toBe(loadSandboxConfig({ SANDBOX_HOST_DIR: '/srv/b/sandboxes' }).installation);
    expect(a.installation).toMatch(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,61}[A-Za-z0-9]$/); // a valid label value
    expect(loadSandboxConfig({ SANDBOX_INSTALLATION: 'prod-eu', SANDBOX_POOL_SIZE: '0' })).toMatchObject({
      installation: 'prod-eu',
      poolSize: 0,
    });
    expect(() => loadSandboxConfig({ SANDBOX_INSTALLATION: 'bad value!' })).toThrow(/SANDBOX_INSTALLATION/);
    expect(() => loadSandboxConfig({ SANDBOX_POOL_SIZE: '-1' })).toThrow(/SANDBOX_POOL_SIZE/);
  });

  it('throws one line naming the bad variable', () => {
    for (const [key, value] of [
      ['SANDBOX_BACKEND', 'podman'],
      ['SANDBOX_IDLE_TIMEOUT_MS', 'soon'],
      ['SANDBOX_PORT_RANGE', '9000-8000'],
      ['SANDBOX_MEMORY_MB', '-1'],
    ] as const) {
      let message = '';
      try {
        loadSandboxConfig({ [key]: value });
      } catch (err) {
        expect(err).toBeInstanceOf(SandboxConfigError);
        message = (err as Error).message;
      }
      expect(message).toContain(key);
      expect(message).not.toContain('\n');
    }
  });

  it('never echoes the token secret', () => {
    expect(() => loadSandboxConfig({ SANDBOX_TOKEN_SECRET: 'short-secret' })).toThrow(/SANDBOX_TOKEN_SECRET/);
    expect(() => loadSandboxConfig({ SANDBOX_TOKEN_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('without SANDBOX_ENABLED every call fails with "sandbox backend is not configured"', async () => {
    const manager = await createSandboxManager(
      loadSandboxConfig({ SANDBOX_BACKEND: 'docker' }),
      silentLogger,
    );
    expect(manager).toBeInstanceOf(DisabledSandboxManager);
    await expect(manager.ensure(newSession())).rejects.toThrow(SandboxNotConfiguredError);
    await expect(manager.exec(newSession(), { command: 'true' })).rejects.toThrow(
      /^sandbox backend is not configured$/,
    );
    expect(NON_RETRYABLE_SANDBOX_ERRORS).toContain('SandboxNotConfiguredError');
  });

  it('derives the same token in every process from one secret file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-secret-'));
    const [a, b] = await Promise.all([loadOrCreateTokenSecret(dir), loadOrCreateTokenSecret(dir)]);
    expect(a).toBe(b);
    expect((await stat(path.join(dir, 'sandbox-token-secret'))).mode & 0o777).toBe(0o600);
    expect(deriveToken(a, 'agent-sandbox-x')).toBe(deriveToken(b, 'agent-sandbox-x'));
    expect(deriveToken(a, 'agent-sandbox-x')).not.toBe(deriveToken(a, 'agent-sandbox-y'));
  });
});
