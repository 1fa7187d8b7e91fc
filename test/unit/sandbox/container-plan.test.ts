/**
 * What a Docker sandbox is created with, computed without an engine: the
 * isolation every sandbox gets, how its daemon listens per network mode, and
 * which skill mounts are refused. The real engine runs these options in
 * test/integration/sandbox/docker-sandbox.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  containerCreateOptions,
  containerMounts,
  dockerNetworkMode,
  type ContainerPlan,
} from '../../../activities/sandbox/docker/container-plan.js';
import { SandboxStartError } from '../../../activities/sandbox/errors.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { LABEL } from '../../../activities/sandbox/sandbox-manager.js';

const config = loadSandboxConfig({ DATA_DIR: '/tmp/plan-test', SANDBOX_MEMORY_MB: '256' });

function plan(overrides: Partial<ContainerPlan> = {}): ContainerPlan {
  return {
    name: 'agent-sandbox-abc',
    labels: { [LABEL.sandbox]: '1' },
    token: 'tok',
    volume: 'agent-sandbox-abc-workspace',
    socketDir: 'agent-sandbox-abc',
    image: 'agent-sandbox:test',
    limits: config.limits,
    skills: [],
    idleTimeoutMs: 30_000,
    pool: false,
    round: 0,
    ...overrides,
  };
}

describe('dockerNetworkMode', () => {
  it('tells a socket-only sandbox, host networking and a named network apart', () => {
    expect(dockerNetworkMode('none')).toBe('none');
    expect(dockerNetworkMode('host')).toBe('host');
    expect(dockerNetworkMode('bridge')).toBe('network');
  });
});

describe('containerCreateOptions', () => {
  const mounts = containerMounts(plan(), '/host/run/agent-sandbox-abc');

  it('drops every capability, forbids new privileges and applies the limits', () => {
    const options = containerCreateOptions(plan(), config, mounts, { mode: 'none', socketMode: '600' });
    expect(options.HostConfig).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      NanoCpus: 1e9,
      PidsLimit: config.limits.pids,
      RestartPolicy: { Name: 'no' },
    });
    expect(options.User).toBe(config.user);
    expect(options.Image).toBe('agent-sandbox:test');
  });

  it('without a network, the daemon listens on the socket in the bind-mounted folder', () => {
    const options = containerCreateOptions(plan(), config, mounts, { mode: 'none', socketMode: '666' });
    expect(options.Env).toEqual(
      expect.arrayContaining([
        'SANDBOX_TOKEN=tok',
        'SANDBOX_SOCKET=/sandbox/run/daemon.sock',
        'SANDBOX_SOCKET_MODE=666',
      ]),
    );
    expect(options.Env).not.toContain('SANDBOX_POOL=1');
    expect(options.HostConfig?.PortBindings).toBeUndefined();
    expect(options.ExposedPorts).toBeUndefined();
  });

  it('on the host network, the daemon binds loopback on the picked port, recorded in a label', () => {
    const options = containerCreateOptions(plan(), config, mounts, { mode: 'host', port: 30123 });
    expect(options.Env).toEqual(expect.arrayContaining(['SANDBOX_HOST=127.0.0.1', 'SANDBOX_PORT=30123']));
    expect(options.Labels).toMatchObject({ [LABEL.port]: '30123' });
  });

  it('on a named network, the daemon port is published on 127.0.0.1 only', () => {
    const options = containerCreateOptions(plan(), config, mounts, { mode: 'network' });
    expect(options.HostConfig?.PortBindings).toEqual({ '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    expect(options.ExposedPorts).toEqual({ '8080/tcp': {} });
  });

  it('a pool sandbox waits for a claim', () => {
    const options = containerCreateOptions(plan({ pool: true }), config, mounts, { mode: 'network' });
    expect(options.Env).toContain('SANDBOX_POOL=1');
  });

  it('does not change the plan it was given', () => {
    const p = plan();
    containerCreateOptions(p, config, mounts, { mode: 'host', port: 30000 });
    expect(p.labels).toEqual({ [LABEL.sandbox]: '1' });
  });
});

describe('containerMounts', () => {
  it('mounts the workspace volume, the socket folder and each skill read-only', () => {
    const mounts = containerMounts(plan({ skills: [{ name: 'pdf', hostPath: 'skills/pdf' }] }), '/run/x');
    expect(mounts).toEqual([
      { Type: 'volume', Source: 'agent-sandbox-abc-workspace', Target: '/sandbox/workspace' },
      { Type: 'bind', Source: '/run/x', Target: '/sandbox/run' },
      { Type: 'bind', Source: path.resolve('skills/pdf'), Target: '/sandbox/skills/pdf', ReadOnly: true },
    ]);
  });

  it('mounts a skills folder as a whole at /sandbox/skills', () => {
    const mounts = containerMounts(plan({ skillsDir: '/data/skills/a1' }), '/run/x');
    expect(mounts).toContainEqual({
      Type: 'bind',
      Source: '/data/skills/a1',
      Target: '/sandbox/skills',
      ReadOnly: true,
    });
  });

  it('refuses a skill name that could leave /sandbox/skills', () => {
    for (const name of ['../etc', '.hidden', 'a/b'])
      expect(() => containerMounts(plan({ skills: [{ name, hostPath: '/x' }] }), '/run/x')).toThrow(
        SandboxStartError,
      );
  });

  it('refuses a skills folder together with per-skill mounts', () => {
    expect(() =>
      containerMounts(plan({ skillsDir: '/d', skills: [{ name: 'pdf', hostPath: '/x' }] }), '/run/x'),
    ).toThrow(/skillsDir or per-skill mounts/);
  });
});
