/** The bundled daemon (dist/daemon.mjs) as a real process on a Unix socket: the form the image runs. */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../../..');
const bundle = path.join(repo, 'sandbox-daemon/dist/daemon.mjs');
const TOKEN = 'bundle-token-0123456789';

function viaSocket(
  socketPath: string,
  method: string,
  urlPath: string,
  body?: string,
  token = TOKEN,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method,
        path: urlPath,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extraHeaders },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('bundled daemon', () => {
  let dir: string;
  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(repo, 'sandbox-daemon/bundle.mjs')], { stdio: 'pipe' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-bundle-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('refuses to start without a token and says why', () => {
    let stdout = '';
    try {
      execFileSync(process.execPath, [bundle], { env: { PATH: process.env.PATH }, stdio: 'pipe' });
    } catch (err) {
      stdout = String((err as { stdout: Buffer }).stdout);
      expect((err as { status: number }).status).toBe(1);
    }
    expect(stdout).toMatch(/SANDBOX_TOKEN must be set/);
  });

  it('serves over a Unix socket, logs requests without their contents, and exits 0 when idle', async () => {
    const socket = path.join(dir, 'run', 'daemon.sock');
    const child = spawn(process.execPath, [bundle], {
      env: {
        PATH: process.env.PATH,
        SANDBOX_TOKEN: TOKEN,
        SANDBOX_SOCKET: socket,
        SANDBOX_ROOT: path.join(dir, 'ws'),
        SANDBOX_IDLE_TIMEOUT_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let logs = '';
    child.stdout.on('data', (c: Buffer) => (logs += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    for (let i = 0; i < 100 && !logs.includes('listening'); i++) await new Promise((r) => setTimeout(r, 50));

    const res = await viaSocket(
      socket,
      'POST',
      '/exec/bash',
      JSON.stringify({ command: 'echo secret-value-xyz', env: { K: 'env-value-xyz' } }),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ stdout: 'secret-value-xyz\n', exit_code: 0 });
    expect(
      (await viaSocket(socket, 'POST', '/exec/bash', '{"command":"true"}', 'wrong-token-000000')).status,
    ).toBe(401);
    // The caller's trace id (W3C traceparent) lands in the request's log line.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = await viaSocket(socket, 'POST', '/exec/bash', '{"command":"true"}', TOKEN, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    expect(traced.status).toBe(200);

    expect(await exited).toBe(0);
    const lines = logs
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'request', method: 'POST', path: '/exec/bash', status: 200 }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'request', path: '/exec/bash', trace_id: traceId }),
    );
    expect(lines.filter((l) => l.trace_id !== undefined)).toHaveLength(1);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'idle shutdown' }));
    expect(logs).not.toContain('secret-value-xyz');
    expect(logs).not.toContain('env-value-xyz');
    expect(logs).not.toContain(TOKEN);
  });
});
