/**
 * Execution ids (issue #7): a command sent with an `id` runs at most once in a
 * daemon, whatever the caller's retries do; `attach_only` never starts one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../sandbox-daemon/config.js';
import { startHarness, TOKEN, type Harness } from './daemon-harness.js';

const lines = async (h: Harness, file: string) =>
  (await readFile(path.join(h.root, file), 'utf8').catch(() => '')).split('\n').filter(Boolean);

/** The result without the request's own `status` and `reused`, to compare what two callers got. */
const body = (r: Record<string, unknown>) => {
  const { status: _status, reused: _reused, ...rest } = r;
  return rest;
};

describe('exec ids', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('runs one process for two concurrent requests with one id; both get its result', async () => {
    const command = 'echo run >> a.log; sleep 0.5; echo "pid $$"';
    const [first, second] = await Promise.all([
      h.exec({ command, id: 'run-1:0:call_a' }),
      (async () => {
        await new Promise((r) => setTimeout(r, 100));
        return h.exec({ command, id: 'run-1:0:call_a' });
      })(),
    ]);
    expect(first).toMatchObject({ status: 200, exit_code: 0 });
    expect(first.reused).toBeUndefined();
    expect(second).toMatchObject({ status: 200, reused: true });
    expect(body(second)).toEqual(body(first));
    expect(await lines(h, 'a.log')).toEqual(['run']);
  });

  it('answers a repeat after the end with the kept result, without running again', async () => {
    const command = 'echo run >> b.log; echo out; echo err >&2; exit 3';
    const first = await h.exec({ command, id: 'b' });
    expect(first).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exit_code: 3 });
    const again = await h.exec({ command, id: 'b' });
    expect(again).toMatchObject({ status: 200, reused: true });
    expect(body(again)).toEqual(body(first));
    // attach_only finds it too; a different timeout is still the same execution.
    const attached = await h.exec({ command, id: 'b', attach_only: true, timeout: 5 });
    expect(attached).toMatchObject({ status: 200, reused: true, exit_code: 3 });
    expect(await lines(h, 'b.log')).toEqual(['run']);
  });

  it('refuses the same id for another command, workdir, env or kind with 409', async () => {
    await h.call('POST', '/files/sub/x', 'x');
    const base = { command: 'echo run >> c.log', id: 'c', env: { A: '1', B: '2' } };
    expect((await h.exec(base)).status).toBe(200);
    // env order does not matter
    expect(await h.exec({ ...base, env: { B: '2', A: '1' } })).toMatchObject({ status: 200, reused: true });
    for (const other of [
      { ...base, command: 'echo other >> c.log' },
      { ...base, workdir: 'sub' },
      { ...base, env: { A: '1' } },
      { ...base, command: 'echo other >> c.log', attach_only: true },
    ]) {
      const r = await h.exec(other);
      expect(r.status).toBe(409);
      expect(r.error).toMatchObject({ code: 'execution_conflict' });
      expect((r.error as { message: string }).message).toContain('"c"');
    }
    const py = await h.exec({ script: 'echo run >> c.log', id: 'c', env: base.env }, 'python');
    expect(py).toMatchObject({ status: 409, error: { code: 'execution_conflict' } });
    expect(await lines(h, 'c.log')).toEqual(['run']);
  });

  it('answers attach_only for an unknown id with 404 unknown_execution and runs nothing', async () => {
    const r = await h.exec({ command: 'echo run >> d.log', id: 'never-sent', attach_only: true });
    expect(r.status).toBe(404);
    expect(r.error).toMatchObject({ code: 'unknown_execution' });
    expect((r.error as { message: string }).message).toContain('never-sent');
    expect(await lines(h, 'd.log')).toEqual([]);
  });

  it('lets attach_only wait for a running execution and get its result', async () => {
    const command = 'echo run >> e.log; sleep 0.6; echo finished';
    const running = h.exec({ command, id: 'e' });
    await new Promise((r) => setTimeout(r, 150));
    const attached = await h.exec({ command, id: 'e', attach_only: true });
    const first = await running;
    expect(attached).toMatchObject({ status: 200, reused: true, stdout: 'finished\n' });
    expect(body(attached)).toEqual(body(first));
    expect(await lines(h, 'e.log')).toEqual(['run']);
  });

  it('keeps running when the caller goes away; a re-send attaches to it', async () => {
    const command = 'echo run >> g.log; sleep 0.6; echo finished';
    const abort = new AbortController();
    const res = fetch(h.base + '/exec/bash', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command, id: 'g' }),
      signal: abort.signal,
    });
    await new Promise((r) => setTimeout(r, 150));
    abort.abort();
    await expect(res).rejects.toThrow();
    const again = await h.exec({ command, id: 'g' });
    expect(again).toMatchObject({ status: 200, reused: true, stdout: 'finished\n', exit_code: 0 });
    expect(await lines(h, 'g.log')).toEqual(['run']);
  });

  it('validates id and attach_only, naming the field', async () => {
    for (const id of ['', 'x'.repeat(201), 'has space', 'ä', 'semi;colon', 12, null]) {
      const r = await h.exec({ command: 'echo run >> h.log', id });
      expect(r.status).toBe(400);
      expect((r.error as { message: string }).message).toContain('"id"');
    }
    expect((await h.exec({ command: 'echo run >> h.log', id: 'x'.repeat(200) })).status).toBe(200);
    const noId = await h.exec({ command: 'echo run >> h.log', attach_only: true });
    expect(noId.status).toBe(400);
    expect((noId.error as { message: string }).message).toContain('"attach_only"');
    const notBool = await h.exec({ command: 'echo run >> h.log', id: 'h2', attach_only: 'yes' });
    expect(notBool.status).toBe(400);
    expect((notBool.error as { message: string }).message).toContain('"attach_only"');
    expect(await lines(h, 'h.log')).toEqual(['run']);
  });

  it('forgets an id whose command could not start, so a corrected request runs', async () => {
    const bad = await h.exec({ command: 'echo run >> i.log', id: 'i', workdir: 'missing' });
    expect(bad.status).toBe(400);
    const good = await h.exec({ command: 'echo run >> i.log', id: 'i' });
    expect(good).toMatchObject({ status: 200, exit_code: 0 });
    expect(good.reused).toBeUndefined();
  });

  it('works for /exec/python', async () => {
    const script = 'open("j.log", "a").write("run\\n")\nprint("py")';
    expect(await h.exec({ script, id: 'j' }, 'python')).toMatchObject({ status: 200, stdout: 'py\n' });
    expect(await h.exec({ script, id: 'j' }, 'python')).toMatchObject({ reused: true, stdout: 'py\n' });
    expect(await lines(h, 'j.log')).toEqual(['run']);
  });
});

describe('exec id retention', () => {
  it('reads its bounds from the environment', () => {
    const config = loadDaemonConfig({
      SANDBOX_TOKEN: TOKEN,
      SANDBOX_EXEC_RETENTION_MS: '5',
      SANDBOX_EXEC_RETENTION_MAX_ENTRIES: '7',
      SANDBOX_EXEC_RETENTION_MAX_BYTES: '9',
    });
    expect(config).toMatchObject({
      execRetentionMs: 5,
      execRetentionMaxEntries: 7,
      execRetentionMaxBytes: 9,
    });
    expect(loadDaemonConfig({ SANDBOX_TOKEN: TOKEN })).toMatchObject({
      execRetentionMs: 15 * 60_000,
      execRetentionMaxEntries: 500,
      execRetentionMaxBytes: 32 * 1024 * 1024,
    });
    expect(() => loadDaemonConfig({ SANDBOX_TOKEN: TOKEN, SANDBOX_EXEC_RETENTION_MS: '-1' })).toThrow(
      /SANDBOX_EXEC_RETENTION_MS/,
    );
  });

  it('forgets a result after the retention period', async () => {
    const h = await startHarness({ execRetentionMs: 300 });
    try {
      const command = 'echo run >> k.log';
      await h.exec({ command, id: 'k' });
      expect(await h.exec({ command, id: 'k' })).toMatchObject({ reused: true });
      await new Promise((r) => setTimeout(r, 400));
      expect(await h.exec({ command, id: 'k', attach_only: true })).toMatchObject({
        status: 404,
        error: { code: 'unknown_execution' },
      });
      // Without attach_only an expired id is a new execution.
      const again = await h.exec({ command, id: 'k' });
      expect(again).toMatchObject({ status: 200 });
      expect(again.reused).toBeUndefined();
      expect(await lines(h, 'k.log')).toEqual(['run', 'run']);
    } finally {
      await h.stop();
    }
  });

  it('keeps at most N results and a bounded number of bytes, the newest always', async () => {
    const h = await startHarness({ execRetentionMaxEntries: 2, execRetentionMaxBytes: 1_000 });
    try {
      for (const id of ['l1', 'l2', 'l3']) await h.exec({ command: 'echo small', id });
      const known = async (id: string, command = 'echo small') =>
        (await h.exec({ command, id, attach_only: true })).status;
      expect([await known('l1'), await known('l2'), await known('l3')]).toEqual([404, 200, 200]);
      // One result bigger than the byte bound: it is kept (the newest), the others go.
      const big = 'head -c 1500 /dev/zero | tr "\\0" x';
      expect((await h.exec({ command: big, id: 'l4' })).status).toBe(200);
      expect([await known('l2'), await known('l3'), await known('l4', big)]).toEqual([404, 404, 200]);
    } finally {
      await h.stop();
    }
  });
});

describe('exec ids and idle shutdown', () => {
  it('does not idle out while a command runs for a caller that went away, nor while one waits for it', async () => {
    const h = await startHarness({ idleTimeoutMs: 300 });
    let closedAt = 0;
    void h.daemon.closed.then(() => (closedAt = Date.now()));
    try {
      const command = 'echo run >> m.log; sleep 1; echo finished';
      // Lower bounds from moments taken before the events: a loaded machine only delays what follows.
      const started = Date.now();
      const abort = new AbortController();
      const res = fetch(h.base + '/exec/bash', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ command, id: 'm' }),
        signal: abort.signal,
      });
      await new Promise((r) => setTimeout(r, 100));
      abort.abort();
      await expect(res).rejects.toThrow();
      // No request for 700 ms, past the 300 ms idle timeout: the running command keeps the daemon up.
      await new Promise((r) => setTimeout(r, 700));
      expect(closedAt).toBe(0);
      const attached = await h.exec({ command, id: 'm', attach_only: true });
      expect(attached).toMatchObject({ status: 200, reused: true, stdout: 'finished\n' });
      expect(await h.daemon.closed).toBe('idle');
      // The command ends 1 s after it starts; the idle clock runs from that end, not from the last request.
      expect(closedAt - started).toBeGreaterThanOrEqual(1_000 + 300);
      expect(await lines(h, 'm.log')).toEqual(['run']);
    } finally {
      await h.stop();
    }
  });
});
