/**
 * The daemon end to end over real HTTP, in-process, without Docker: the same
 * contract the docker tests check again inside a container.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../sandbox-daemon/config.js';
import { startHarness, TOKEN, type Harness } from './daemon-harness.js';

/** A zombie left for a non-reaping init counts as dead: it no longer runs. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** node:http sends the path byte for byte (fetch would normalise "..", "%2e%2e"). */
function rawRequest(
  base: string,
  method: string,
  urlPath: string,
): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: urlPath,
        headers: { authorization: `Bearer ${TOKEN}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const hasPython = ['/usr/bin/python3', '/usr/local/bin/python3'].some((p) => existsSync(p));

/** The command's parent: python3 when the fork server started it, the daemon's Node otherwise. */
async function parentOf(h: Harness): Promise<string> {
  return String((await h.exec({ command: 'cat /proc/$PPID/comm' })).stdout).trim();
}

// Every exec test runs twice: through the fork server (the fast path) and through spawn() (the fallback).
describe.each([
  { forkServer: true, skip: !hasPython },
  { forkServer: false, skip: false },
])('sandbox daemon (fork server: $forkServer)', ({ forkServer, skip }) => {
  let h: Harness;
  beforeAll(async () => {
    if (skip) return;
    h = await startHarness(
      { maxOutputBytes: 64 * 1024, maxFileBytes: 256 * 1024, forkServer },
      { CUSTOM_BASE: 'base' },
    );
    // The fork server starts in the background; commands use spawn() until it is ready.
    for (let i = 0; forkServer && i < 100 && (await parentOf(h)) !== 'python3'; i++)
      await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(async () => h?.stop());

  describe.skipIf(skip)('auth', () => {
    it('serves /health without a token', async () => {
      const res = await fetch(h.base + '/health');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok' });
    });

    it('answers 401 without or with a wrong token', async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }]) {
        const res = await fetch(h.base + '/exec/bash', {
          method: 'POST',
          headers,
          body: JSON.stringify({ command: 'true' }),
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({
          error: { code: 'unauthorized', message: expect.any(String) as string },
        });
      }
      const file = await fetch(h.base + '/files/x.txt', { headers: { authorization: 'Bearer nope' } });
      expect(file.status).toBe(401);
    });

    it('refuses to start without SANDBOX_TOKEN', () => {
      expect(() => loadDaemonConfig({})).toThrow(/SANDBOX_TOKEN/);
    });
  });

  describe.skipIf(skip)('exec', () => {
    it(forkServer ? 'starts commands through the fork server' : 'starts commands with spawn()', async () => {
      if (forkServer) expect(await parentOf(h)).toBe('python3');
      else expect(await parentOf(h)).not.toBe('python3');
    });

    it('gives commands default signal handling (a closed pipe ends the writer quietly)', async () => {
      const r = await h.exec({ command: 'yes | head -n 2; trap -p' });
      expect(r).toMatchObject({ stdout: 'y\ny\n', stderr: '', exit_code: 0 });
    });

    it("returns the sandbox tool's result object", async () => {
      const r = await h.exec({ command: 'echo hello; echo oops >&2' });
      expect(r).toEqual({
        status: 200,
        stdout: 'hello\n',
        stderr: 'oops\n',
        exit_code: 0,
        duration_ms: expect.any(Number) as number,
      });
    });

    it('supports pipes, redirection and bash-only features', async () => {
      const r = await h.exec({
        command:
          'printf "b\\na\\n" | sort > sorted.txt && cat < sorted.txt | tr a-z A-Z; arr=(x y z); echo "${arr[1]} ${#arr[@]}"; [[ abc == a* ]] && echo glob; diff <(echo 1) <(echo 1) && echo same',
      });
      expect(r.stdout).toBe('A\nB\ny 3\nglob\nsame\n');
      expect(await readFile(path.join(h.root, 'sorted.txt'), 'utf8')).toBe('a\nb\n');
    });

    it('passes env and workdir, and keeps the daemon token out of commands', async () => {
      await mkdir(path.join(h.root, 'sub/dir'), { recursive: true });
      const r = await h.exec({
        command: 'echo "$GREETING|$CUSTOM_BASE|${SANDBOX_TOKEN:-none}"; pwd',
        env: { GREETING: 'hi there' },
        workdir: 'sub/dir',
      });
      expect(r.stdout).toBe(`hi there|base|none\n${path.join(h.root, 'sub/dir')}\n`);
    });

    it('rejects a workdir outside the root or missing', async () => {
      expect((await h.exec({ command: 'pwd', workdir: '../' })).status).toBe(400);
      expect((await h.exec({ command: 'pwd', workdir: '/etc' })).status).toBe(400);
      expect((await h.exec({ command: 'pwd', workdir: 'nope' })).status).toBe(400);
    });

    it('reports a non-zero exit code and a signal death', async () => {
      expect((await h.exec({ command: 'exit 3' })).exit_code).toBe(3);
      expect((await h.exec({ command: 'kill -TERM $$' })).exit_code).toBe(143);
    });

    it('kills the whole process tree on timeout', async () => {
      const r = await h.exec({
        command: '(sleep 30; echo late) & echo $! > bg.pid; sleep 30 & echo $! >> bg.pid; echo started; wait',
        timeout: 0.5,
      });
      expect(r).toMatchObject({ exit_code: 124, timed_out: true, stdout: 'started\n' });
      const pids = (await readFile(path.join(h.root, 'bg.pid'), 'utf8')).trim().split('\n').map(Number);
      expect(pids).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 100));
      for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
    });

    it('does not wait for a background job that outlives the command', async () => {
      const r = await h.exec({ command: 'sleep 5 & echo done' });
      expect(r).toMatchObject({ exit_code: 0, stdout: 'done\n' });
      expect(r.duration_ms).toBeLessThan(4000);
    });

    it('caps output per stream and says so', async () => {
      const r = await h.exec({ command: 'head -c 200000 /dev/zero | tr "\\0" a; echo small >&2' });
      expect((r.stdout as string).length).toBe(64 * 1024);
      expect(r.stdout_truncated).toBe(true);
      expect(r.stderr).toBe('small\n');
      expect(r.stderr_truncated).toBeUndefined();
    });

    it('runs commands concurrently', async () => {
      // Each waits for the other's marker: only passes when both run at once.
      const [a, b] = await Promise.all([
        h.exec({
          command: 'touch a.mark; for i in $(seq 50); do [ -e b.mark ] && exit 0; sleep 0.1; done; exit 1',
        }),
        h.exec({
          command: 'touch b.mark; for i in $(seq 50); do [ -e a.mark ] && exit 0; sleep 0.1; done; exit 1',
        }),
      ]);
      expect([a.exit_code, b.exit_code]).toEqual([0, 0]);
    });

    it('runs python scripts with the same contract', async () => {
      const r = await h.exec(
        {
          script: 'import os, sys\nprint(os.environ["X"] * 2)\nsys.stderr.write("e")\nsys.exit(2)',
          env: { X: 'ab' },
        },
        'python',
      );
      expect(r).toMatchObject({ stdout: 'abab\n', stderr: 'e', exit_code: 2 });
    });

    it('validates the body', async () => {
      expect((await h.exec({})).status).toBe(400);
      expect((await h.exec({ command: 'true', timout: 3 })).status).toBe(400);
      expect((await h.exec({ command: 'true', timeout: -1 })).status).toBe(400);
      expect((await h.exec({ command: 'true', timeout: 100000 })).status).toBe(400);
      expect((await h.exec({ command: 'true', env: { 'BAD-NAME': 'x' } })).status).toBe(400);
      const res = await h.call('POST', '/exec/bash', '{not json', { 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      expect((await h.call('GET', '/exec/bash')).status).toBe(405);
      expect((await h.call('GET', '/nope')).status).toBe(404);
    });
  });

  describe.skipIf(skip)('files', () => {
    it('round-trips binary content with parent folders created', async () => {
      const bytes = new Uint8Array(256 * 4).map((_, i) => i % 256);
      const put = await h.call('POST', '/files/deep/er/blob.bin', bytes);
      expect(put.status).toBe(200);
      expect(await put.json()).toEqual({ path: 'deep/er/blob.bin', size: bytes.length });
      const get = await h.call('GET', '/files/deep/er/blob.bin');
      expect(get.status).toBe(200);
      expect(get.headers.get('content-type')).toBe('application/octet-stream');
      expect(new Uint8Array(await get.arrayBuffer())).toEqual(bytes);
    });

    it('sets a content type from the extension and decodes encoded names', async () => {
      await h.call('POST', '/files/notes%20v1.md', '# hi');
      const get = await h.call('GET', '/files/notes%20v1.md');
      expect(get.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(await get.text()).toBe('# hi');
      expect(existsSync(path.join(h.root, 'notes v1.md'))).toBe(true);
    });

    it('answers 404 for a missing file and deletes', async () => {
      expect((await h.call('GET', '/files/missing.txt')).status).toBe(404);
      await h.call('POST', '/files/gone.txt', 'x');
      const del = await h.call('DELETE', '/files/gone.txt');
      expect(await del.json()).toEqual({ path: 'gone.txt', deleted: true });
      expect((await h.call('GET', '/files/gone.txt')).status).toBe(404);
      expect((await h.call('DELETE', '/files/gone.txt')).status).toBe(404);
    });

    it('deletes a folder only when asked to recurse', async () => {
      await h.call('POST', '/files/tree/a/b.txt', 'x');
      expect((await h.call('DELETE', '/files/tree')).status).toBe(400);
      expect((await h.call('DELETE', '/files/tree?recursive=true')).status).toBe(200);
      expect(existsSync(path.join(h.root, 'tree'))).toBe(false);
    });

    it('rejects traversal, absolute, encoded, NUL and symlink escapes with 400', async () => {
      await symlink('/etc/passwd', path.join(h.root, 'passwd-link'));
      await symlink('/etc', path.join(h.root, 'etc-link'));
      const raw = [
        '../../etc/passwd',
        'a/../../etc/passwd',
        '%2e%2e/%2e%2e/etc/passwd',
        '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
        '..%2f..%2fetc%2fpasswd',
        '%2fetc%2fpasswd',
        '/etc/passwd',
        'a%00b',
        'passwd-link',
        'etc-link/hostname',
      ];
      for (const p of raw) {
        for (const method of ['GET', 'DELETE']) {
          const res = await rawRequest(h.base, method, '/files/' + p);
          expect(res.status, `${method} ${p}`).toBe(400);
          expect((JSON.parse(res.body) as { error: { code: string } }).error.code, p).toBe('path_escape');
        }
      }
      expect((await h.call('POST', '/files/etc-link/evil.txt', 'x')).status).toBe(400);
      expect(existsSync('/etc/evil.txt')).toBe(false);
      expect((await h.call('GET', '/files/passwd-link')).status).toBe(400);
    });

    it('caps the size of a written file', async () => {
      const res = await h.call('POST', '/files/big.bin', new Uint8Array(300 * 1024));
      expect(res.status).toBe(413);
      expect(existsSync(path.join(h.root, 'big.bin'))).toBe(false);
    });

    it('follows a symlink that stays inside the root', async () => {
      await writeFile(path.join(h.root, 'safe.txt'), 'safe');
      await symlink(path.join(h.root, 'safe.txt'), path.join(h.root, 'safe-link'));
      expect((await h.call('GET', '/files/safe-link')).status).toBe(200);
    });
  });
});

describe('idle shutdown', () => {
  it('stops after the idle timeout; health checks do not keep it alive', async () => {
    const h = await startHarness({ idleTimeoutMs: 400 });
    const poll = setInterval(() => void fetch(h.base + '/health').catch(() => {}), 50);
    try {
      expect((await h.exec({ command: 'sleep 0.6' })).exit_code).toBe(0); // a running command is activity
      const started = Date.now();
      expect(await h.daemon.closed).toBe('idle');
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      clearInterval(poll);
      await h.stop();
    }
  });
});

describe('pool sandbox claim', () => {
  const NEW_TOKEN = 'session-token-abcdef0123456789';
  const claim = (h: Harness, body: unknown, token = TOKEN) =>
    h.call('POST', '/claim', body, { authorization: `Bearer ${token}`, 'content-type': 'application/json' });

  it('is claimed once: the session token replaces the pool token, a second claim is refused', async () => {
    const h = await startHarness({ pool: true });
    try {
      expect(await (await fetch(h.base + '/health')).json()).toMatchObject({ pool: 'waiting' });
      expect(
        (await claim(h, { token: NEW_TOKEN, idle_timeout_ms: 0 }, 'wrong-token-0123456789')).status,
      ).toBe(401);
      expect((await claim(h, { token: 'short', idle_timeout_ms: 0 })).status).toBe(400);
      expect((await claim(h, { token: NEW_TOKEN, idle_timeout_ms: 0 })).status).toBe(200);
      expect(await (await fetch(h.base + '/health')).json()).toMatchObject({ pool: 'claimed' });
      // The pool token no longer opens anything; the session's does.
      expect((await h.call('POST', '/exec/bash', { command: 'true' })).status).toBe(401);
      const ok = await h.call(
        'POST',
        '/exec/bash',
        { command: 'echo hi' },
        { authorization: `Bearer ${NEW_TOKEN}` },
      );
      expect(await ok.json()).toMatchObject({ stdout: 'hi\n', exit_code: 0 });
      const again = await claim(h, { token: 'another-token-0123456789', idle_timeout_ms: 0 }, NEW_TOKEN);
      expect(again.status).toBe(409);
    } finally {
      await h.stop();
    }
  });

  it('takes the session idle timeout when claimed', async () => {
    const h = await startHarness({ pool: true, idleTimeoutMs: 0 });
    try {
      expect((await claim(h, { token: NEW_TOKEN, idle_timeout_ms: 300 })).status).toBe(200);
      expect(await h.daemon.closed).toBe('idle');
    } finally {
      await h.stop();
    }
  });

  it('is not offered by a daemon that is not a pool sandbox', async () => {
    const h = await startHarness();
    try {
      expect((await claim(h, { token: NEW_TOKEN, idle_timeout_ms: 0 })).status).toBe(404);
    } finally {
      await h.stop();
    }
  });
});
