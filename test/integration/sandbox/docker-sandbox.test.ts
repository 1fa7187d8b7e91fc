/**
 * The docker backend on a real engine: exec and file features through the
 * manager, escapes, auth, isolation, limits and recovery. Run with
 *   VITEST_NO_SERVICES=1 npx vitest run test/integration/sandbox
 */
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonRequest } from '../../../activities/sandbox/daemon-client.js';
import {
  SandboxFileNotFoundError,
  SandboxRequestError,
  SandboxStartError,
} from '../../../activities/sandbox/errors.js';
import {
  sandboxName,
  type SandboxHandle,
  type SandboxSession,
} from '../../../activities/sandbox/sandbox-manager.js';
import {
  buildImage,
  cleanup,
  docker,
  dockerUnavailableReason,
  makeManager,
  newSession,
  type TestManager,
  waitFor,
} from './docker-harness.js';

const unavailable = await dockerUnavailableReason();

describe.skipIf(unavailable !== undefined)('docker sandbox', () => {
  let t: TestManager;
  let session: SandboxSession;
  let handle: SandboxHandle;

  beforeAll(async () => {
    buildImage();
    t = makeManager({
      SANDBOX_IDLE_TIMEOUT_MS: '600000',
      SANDBOX_MEMORY_MB: '256',
      SANDBOX_PIDS_LIMIT: '100',
      SANDBOX_CPUS: '0.5',
    });
    session = newSession();
    handle = await t.manager.ensure(session);
  }, 20 * 60_000);
  afterAll(async () => {
    await t?.manager.close();
    await cleanup();
  });

  it('creates one labelled container per session and reuses it', async () => {
    expect(handle.created).toBe(true);
    expect(handle.endpoint.kind).toBe('unix');
    const again = await t.manager.ensure(session);
    expect(again).toMatchObject({ id: handle.id, created: false });
    const info = await docker.getContainer(handle.id).inspect();
    expect(info.Name).toBe('/' + sandboxName(session));
    expect(info.Config.Labels).toMatchObject({
      'agent-server.project-id': session.projectId,
      'agent-server.agent-id': session.agentId,
      'agent-server.conversation-id': session.conversationId,
    });
    expect(JSON.stringify(info.Config.Labels)).not.toContain(handle.token);
  });

  it('runs bash with pipes, redirection, bash-only features, env, workdir and exit codes', async () => {
    const r = await t.manager.exec(session, {
      command:
        'mkdir -p sub && printf "b\\na\\n" | sort > sub/s.txt; cd sub && cat < s.txt | tr a-z A-Z; arr=(1 2 3); echo "${#arr[@]} $GREETING"; [[ $(pwd) == /sandbox/workspace/sub ]] && echo inside',
      env: { GREETING: 'hi' },
    });
    expect(r).toMatchObject({ stdout: 'A\nB\n3 hi\ninside\n', stderr: '', exit_code: 0 });
    expect((await t.manager.exec(session, { command: 'pwd', workdir: 'sub' })).stdout).toBe(
      '/sandbox/workspace/sub\n',
    );
    expect((await t.manager.exec(session, { command: 'echo err >&2; exit 7' })).exit_code).toBe(7);
    expect((await t.manager.exec(session, { command: 'echo "[${SANDBOX_TOKEN:-hidden}]"' })).stdout).toBe(
      '[hidden]\n',
    );
    expect((await t.manager.execPython(session, { script: 'print(sum(range(10)))' })).stdout).toBe('45\n');
  });

  it('kills the whole process tree on timeout', async () => {
    const r = await t.manager.exec(session, {
      command: 'sleep 300 & sleep 301 & (sleep 302; true) & echo go; wait',
      timeout: 1,
    });
    expect(r).toMatchObject({ exit_code: 124, timed_out: true, stdout: 'go\n' });
    await waitFor(
      async () =>
        (
          await t.manager.exec(session, { command: 'ps -eo args | grep -c "^sleep 30[012]" || true' })
        ).stdout.trim() === '0',
      5000,
      'sleeps to die',
    );
  });

  it('caps output at 1 MiB per stream', async () => {
    const r = await t.manager.exec(session, { command: 'head -c 3000000 /dev/zero | tr "\\0" x' });
    expect(r.stdout.length).toBe(1024 * 1024);
    expect(r.stdout_truncated).toBe(true);
  });

  it('round-trips binary files, deletes, and reports a missing file', async () => {
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    await t.manager.writeFile(session, 'bin/data.bin', bytes);
    expect(Buffer.compare(await t.manager.readFile(session, 'bin/data.bin'), bytes)).toBe(0);
    expect((await t.manager.exec(session, { command: 'stat -c %s bin/data.bin' })).stdout).toBe('4096\n');
    await t.manager.deleteFile(session, 'bin/data.bin');
    await expect(t.manager.readFile(session, 'bin/data.bin')).rejects.toThrow(SandboxFileNotFoundError);
  });

  it('refuses traversal and symlink escapes', async () => {
    await t.manager.exec(session, { command: 'ln -sf /etc/passwd passwd-link && ln -sfn /etc etc-link' });
    await expect(t.manager.readFile(session, 'passwd-link')).rejects.toThrow(SandboxRequestError);
    await expect(t.manager.readFile(session, 'etc-link/hostname')).rejects.toMatchObject({
      status: 400,
      code: 'path_escape',
    });
    await expect(t.manager.writeFile(session, 'etc-link/x', 'x')).rejects.toMatchObject({ status: 400 });
    for (const raw of [
      '/files/../../etc/passwd',
      '/files/%2e%2e/%2e%2e/etc/passwd',
      '/files/%2Fetc%2Fpasswd',
      '/files/a%00b',
    ]) {
      const res = await daemonRequest(handle.endpoint, {
        method: 'GET',
        path: raw,
        token: handle.token,
        timeoutMs: 5000,
      });
      expect(res.status, raw).toBe(400);
    }
  });

  it('requires the bearer token', async () => {
    for (const token of [undefined, 'wrong-token-value-000000']) {
      const res = await daemonRequest(handle.endpoint, {
        method: 'POST',
        path: '/exec/bash',
        token,
        body: '{"command":"true"}',
        contentType: 'application/json',
        timeoutMs: 5000,
      });
      expect(res.status).toBe(401);
    }
    const health = await daemonRequest(handle.endpoint, { method: 'GET', path: '/health', timeoutMs: 5000 });
    expect(health.status).toBe(200);
  });

  it('has no network in a "none" sandbox', async () => {
    expect((await t.manager.exec(session, { command: 'ls /sys/class/net' })).stdout).toBe('lo\n');
    // 1.1.1.1 is public: with no interface there is no route, so nothing leaves the container.
    const r = await t.manager.execPython(session, {
      script:
        'import socket\nfor host, port in [("1.1.1.1", 80), ("127.0.0.1", 5432)]:\n  try:\n    socket.create_connection((host, port), timeout=3); print("connected", host)\n  except OSError as e:\n    print("blocked", host, e.errno)\n',
    });
    expect(r.stdout).toMatch(/^blocked 1\.1\.1\.1 \d+\nblocked 127\.0\.0\.1 \d+\n$/);
  });

  it('applies the limits: inspect data and the cgroup files inside agree', async () => {
    const info = await docker.getContainer(handle.id).inspect();
    expect(info.HostConfig).toMatchObject({
      Memory: 256 * 1024 * 1024,
      NanoCpus: 0.5e9,
      PidsLimit: 100,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      NetworkMode: 'none',
      Privileged: false,
    });
    expect(info.Config.User).toBe('1000:1000');
    const r = await t.manager.exec(session, {
      command:
        'if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max; else cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max; fi; id -u; grep CapEff /proc/self/status',
    });
    expect(r.stdout).toBe(`${256 * 1024 * 1024}\n100\n1000\nCapEff:\t0000000000000000\n`);
  });

  it('survives a fork bomb: the pids limit and the timeout stop it', async () => {
    const bomb = await t.manager.exec(session, {
      command: 'bomb() { bomb | bomb & }; bomb; sleep 5',
      timeout: 4,
    });
    expect(bomb.exit_code).not.toBe(0);
    await waitFor(
      async () =>
        Number((await t.manager.exec(session, { command: 'ps -e --no-headers | wc -l' })).stdout) < 20,
      15_000,
      'the bomb to be gone',
    );
    expect((await t.manager.exec(session, { command: 'echo alive' })).stdout).toBe('alive\n');
  });

  it('mounts skills read-only at /sandbox/skills/<name>/', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-skill-'));
    await writeFile(path.join(dir, 'SKILL.md'), '# csv skill\n', { mode: 0o644 });
    await chmod(dir, 0o755); // the sandbox user (uid 1000) must be able to read the host folder
    const s = newSession();
    await t.manager.ensure(s, { skills: [{ name: 'csv', hostPath: dir }] });
    const r = await t.manager.exec(s, {
      command: 'cat /sandbox/skills/csv/SKILL.md; touch /sandbox/skills/csv/x 2>/dev/null || echo read-only',
    });
    expect(r.stdout).toBe('# csv skill\nread-only\n');
    await t.manager.destroy(s);
  });

  it('recovers from a container killed from outside, on the same workspace', async () => {
    await t.manager.writeFile(session, 'keep.txt', 'kept');
    await docker.getContainer(handle.id).kill();
    const r = await t.manager.exec(session, { command: 'cat keep.txt' });
    expect(r.stdout).toBe('kept');
    const now = await t.manager.ensure(session);
    expect(now.id).not.toBe(handle.id);
    const old = await docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`agent-server.sandbox.session`], name: [sandboxName(session)] }),
    });
    expect(old.map((c) => c.Id)).toEqual([now.id]);
    handle = now;
  });

  it('fails clearly when the image does not exist', async () => {
    await expect(t.manager.ensure(newSession(), { image: 'agent-sandbox:does-not-exist' })).rejects.toThrow(
      SandboxStartError,
    );
    await expect(t.manager.ensure(newSession(), { image: 'agent-sandbox:does-not-exist' })).rejects.toThrow(
      /not found \(build it with npm run sandbox:image\)/,
    );
  });

  it('destroy removes the container and the workspace volume', async () => {
    const s = newSession();
    const h = await t.manager.ensure(s);
    await t.manager.destroy(s);
    await expect(docker.getContainer(h.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(docker.getVolume(`${sandboxName(s)}-workspace`).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});
