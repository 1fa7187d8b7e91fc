/**
 * Password guessing: after AUTH_LOGIN_MAX_FAILURES failed sign-ins for a user
 * name within the window, further attempts — the right password included —
 * are 429 with Retry-After, on every replica (the count is the audit log's),
 * until the window has passed; other user names are not held up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../core/auth/passwords.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createTestUser } from '../../helpers/users.js';

const PASSWORD = 'correct horse battery staple';

describe('failed sign-ins are throttled', () => {
  let api: TestApi;
  let replica: TestApi;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    const env = { AUTH_MODE: 'users', AUTH_LOGIN_MAX_FAILURES: '3', AUTH_LOGIN_FAILURE_WINDOW_SECONDS: '3' };
    api = await startTestApi(env);
    replica = await startTestApi(env);
    const db = api.server.deps.db;
    for (const name of ['alice', 'bob']) {
      const user = await createTestUser(db);
      await db('users')
        .where({ id: user.id })
        .update({ password_hash: await hashPassword(PASSWORD) });
      if (name === 'alice') alice = user.userName;
      else bob = user.userName;
    }
  });
  afterAll(async () => {
    await api?.close();
    await replica?.close();
  });

  const login = (on: TestApi, user_name: string, password: string) =>
    on.request('POST', '/api/agent-server/auth/login', { user_name, password });

  it('holds a user name after too many failures, on any replica, then lets it in again', async () => {
    for (let i = 0; i < 3; i++) expect((await login(api, alice, 'wrong password!')).status).toBe(401);
    const held = await login(replica, alice, PASSWORD);
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(held.body.errorDetails).toMatchObject({ retry_after_seconds: expect.any(Number) as number });
    // Another user name signs in as usual.
    expect((await login(api, bob, PASSWORD)).status).toBe(200);
    // After the window, the right password works.
    await new Promise((r) => setTimeout(r, Number(held.headers.get('retry-after')) * 1000 + 200));
    expect((await login(api, alice, PASSWORD)).status).toBe(200);
  });
});
