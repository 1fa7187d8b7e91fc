/**
 * `npm start` as a user runs it: embedded PostgreSQL and a Temporal dev server
 * in a fresh DATA_DIR, then API + worker. Proves ready/UI, a clean stop with no
 * processes left, recovery after a crash, and data kept across restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { noTemporal } from '../helpers/services.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  output: () => string;
}

async function processesMentioning(needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(needle)) found.push(`${pid}: ${cmd.replace(/\0/g, ' ').slice(0, 200)}`);
  }
  return found;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('process did not exit')), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe.skipIf(noTemporal())('npm start with embedded defaults', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let base: string;
  let uiPort: number;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-start-'));
    await chmod(dir, 0o755); // the postgres system user must reach the data dir inside
    dataDir = path.join(dir, 'data');
    const port = await freePort();
    uiPort = await freePort();
    base = `http://127.0.0.1:${port}/api/agent-server`;
    env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), TEMPORAL_PORT: String(await freePort()) };
    env.TEMPORAL_UI_PORT = String(uiPort);
    env.EMBEDDED_PG_PORT = String(await freePort());
    env.LOG_LEVEL = 'warn';
    for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY', 'ADMIN_TOKEN']) delete env[key];
  });

  afterAll(async () => {
    for (const line of await processesMentioning(dataDir))
      process.kill(Number(line.split(':')[0]), 'SIGKILL');
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  async function start(): Promise<Started> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const deadline = Date.now() + 90_000;
    while (!out.includes('agent-server is running')) {
      if (child.exitCode !== null) throw new Error(`npm start exited early:\n${out}`);
      if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { child, output: () => out };
  }

  it('comes up ready with the Temporal UI, stops without leftovers, and keeps data across restarts and crashes', async () => {
    const first = await start();
    expect(first.output()).toContain(`Temporal UI   http://127.0.0.1:${uiPort}`);
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);
    const created = (await (
      await fetch(`${base}/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'kept' }),
      })
    ).json()) as { data: { id: string } };

    // Clean stop: postgres and the temporal dev server are gone with it.
    first.child.kill('SIGINT');
    expect(await waitExit(first.child, 60_000)).toBe(0);
    expect(await processesMentioning(dataDir)).toEqual([]);

    // Crash: on SIGKILL the kernel stops postgres and temporal with it (parent-death
    // signal, scripts/lib/children.ts); the next start recovers.
    const second = await start();
    const kept = await fetch(`${base}/projects/${created.data.id}`);
    expect(kept.status).toBe(200);
    second.child.kill('SIGKILL');
    await waitExit(second.child, 10_000);
    const deadline = Date.now() + 20_000;
    while ((await processesMentioning(dataDir)).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await processesMentioning(dataDir)).toEqual([]);

    const third = await start();
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    expect(
      ((await (await fetch(`${base}/projects/${created.data.id}`)).json()) as { data: { name: string } }).data
        .name,
    ).toBe('kept');
    third.child.kill('SIGTERM');
    expect(await waitExit(third.child, 60_000)).toBe(0);
    expect(await processesMentioning(dataDir)).toEqual([]);
  }, 300_000);

  it('stops at once with one clear line on bad configuration', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env: { ...env, PORT: 'abc' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await waitExit(child, 30_000)).toBe(1);
    expect(stderr.trim().split('\n')).toEqual(['Invalid configuration: PORT must be a number (got "abc")']);
  });
});
