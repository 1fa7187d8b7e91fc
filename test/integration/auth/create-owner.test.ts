/**
 * The one-time bootstrap command, run as an operator would: it makes the
 * first owner, prints a token that works at once, and refuses a second time.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, Browser, rowCount, startUsersModeApi, type UsersModeApi } from './users-mode.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('npm run users:create-owner', () => {
  let env: UsersModeApi;

  const createOwner = (args: string[], extraEnv: Record<string, string>, input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/create-owner.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: env.url, AUTH_MODE: 'users', ...extraEnv },
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });

  beforeAll(async () => {
    env = await startUsersModeApi('auth_bootstrap');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('refuses a short password and a missing user name, creating nobody', () => {
    const short = createOwner(['--user-name', 'alice'], { OWNER_PASSWORD: 'short' });
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('password must be');
    const nameless = createOwner([], { OWNER_PASSWORD: 'a long enough password' });
    expect(nameless.status).toBe(1);
    expect(nameless.stderr).toContain('--user-name is required');
  });

  it('creates the first owner and prints a personal token that works at once', async () => {
    expect(await rowCount(env.db, 'setup_tokens')).toBe(1);
    const run = createOwner(['--user-name', 'alice', '--display-name', 'Alice'], {
      OWNER_PASSWORD: 'a long enough password',
    });
    expect(run.stderr).toContain('owner alice created');
    expect(run.status).toBe(0);
    const token = run.stdout.trim();
    expect(token).toMatch(/^ags_pat_[A-Za-z0-9_-]+$/);

    const session = await env.api.request<{ user: { user_name: string; org_role: string } }>(
      'GET',
      '/api/agent-server/auth/session',
      undefined,
      bearer(token),
    );
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ user_name: 'alice', org_role: 'owner' });
    expect((await env.api.request('GET', '/api/agent-server/users', undefined, bearer(token))).status).toBe(
      200,
    );
    // The password works in the console too, and setup is over.
    const browser = new Browser(env.api);
    const login = await browser.request('POST', '/api/agent-server/auth/login', {
      user_name: 'alice',
      password: 'a long enough password',
    });
    expect(login.status).toBe(200);
    expect(await rowCount(env.db, 'setup_tokens')).toBe(0);
    const config = await env.api.request<{ setup_required: boolean }>('GET', '/api/agent-server/auth/config');
    expect(config.body.data.setup_required).toBe(false);
    expect(
      await env.db('audit_events').where({ action: 'user.create', actor_type: 'setup' }).first(),
    ).toBeDefined();
  });

  it('refuses when an owner exists, the password read from stdin', () => {
    const again = createOwner(['--user-name', 'bob'], {}, 'another long password\n');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('an owner already exists');
    expect(again.stdout).toBe('');
  });
});
