/**
 * The provisioning scenario across two real API processes on one database:
 * an identity provider creates a user over SCIM, the user works with a
 * token and signs in with a password, the provider deactivates them on one replica,
 * and the very next request on the other replica is refused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { gatewayReplicaEnv, spawnApi, type ApiProcess } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';
import { createTestToken, createTestUser } from '../../helpers/users.js';
import { PATCH_OP, scimClient, USER } from './scim-client.js';

const SCIM_TOKEN = randomBytes(24).toString('base64url');

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let db: Db;
let apis: ApiProcess[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase('scim_replicas');
  db = createDb(scratch.url, { max: 2 });
  await migrateLatest(db);
  const env = { ...gatewayReplicaEnv(scratch.url), AUTH_MODE: 'users', SCIM_TOKEN };
  apis = await Promise.all([spawnApi(env), spawnApi(env)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()));
  await db?.destroy();
  await scratch?.drop();
});

/**
 * Signs `userName` in with a password on `baseUrl`, as the console does:
 * an organisation admin gives the SCIM-made user a password through the
 * users API first (SCIM keeps none). Answers the session cookie.
 */
async function signIn(baseUrl: string, userId: string, userName: string): Promise<string> {
  const admin = await createTestUser(db, { orgRole: 'admin' });
  const password = randomBytes(18).toString('base64url');
  const set = await fetch(`${baseUrl}/api/agent-server/users/${userId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
  expect(set.status).toBe(200);
  const login = await fetch(`${baseUrl}/api/agent-server/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user_name: userName, password }),
  });
  expect(login.status).toBe(200);
  const cookie = /ags_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
  expect(cookie).toBeDefined();
  return cookie!;
}

describe('SCIM deactivation across replicas', () => {
  it("refuses a deactivated user's token and session on the next request, on the other replica", async () => {
    const [a, b] = [apis[0]!, apis[1]!];
    const scimOnA = scimClient(a.url, SCIM_TOKEN);
    const created = await scimOnA<{ id: string; active: boolean }>('POST', '/Users', {
      schemas: [USER],
      userName: 'ann.replica@example.test',
      name: { givenName: 'Ann', familyName: 'Replica' },
      emails: [{ value: 'ann.replica@example.test', type: 'work', primary: true }],
      active: true,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${a.url}/scim/v2/Users/${created.body.id}`);
    const userId = created.body.id;

    const token = await createTestToken(db, { userId });
    const session = await signIn(b.url, userId, 'ann.replica@example.test');
    const asToken = () =>
      fetch(`${b.url}/api/agent-server/projects`, { headers: { authorization: `Bearer ${token}` } });
    const asSession = () =>
      fetch(`${b.url}/api/agent-server/projects`, { headers: { cookie: `ags_session=${session}` } });
    expect((await asToken()).status).toBe(200);
    expect((await asSession()).status).toBe(200);

    // Entra ID's form: a capitalised op and the boolean as a string.
    const deactivated = await scimOnA<{ active: boolean }>('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);

    expect((await asToken()).status).toBe(401);
    expect((await asSession()).status).toBe(401);
    // The session is gone, not merely refused: reactivation does not bring it back.
    expect(await db('user_sessions').where({ user_id: userId }).first()).toBeUndefined();

    const reactivated = await scimClient(b.url, SCIM_TOKEN)('PATCH', `/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    expect(reactivated.status).toBe(200);
    expect((await asToken()).status).toBe(200);
    expect((await asSession()).status).toBe(401);
  });

  it('never deactivates nor deletes the last active owner (409), as the users API does not', async () => {
    // This database has no other owner: the one made here is the last.
    const owner = await createTestUser(db, { orgRole: 'owner' });
    const scim = scimClient(apis[0]!.url, SCIM_TOKEN);
    const deactivate = await scim('PATCH', `/Users/${owner.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    expect(deactivate.status).toBe(409);
    expect(deactivate.body).toMatchObject({ status: '409' });
    expect((await scim('DELETE', `/Users/${owner.id}`)).status).toBe(409);
    expect((await db('users').where({ id: owner.id }).first<{ active: boolean }>('active'))?.active).toBe(
      true,
    );

    const second = await createTestUser(db, { orgRole: 'owner' });
    expect((await scim('DELETE', `/Users/${owner.id}`)).status).toBe(204);
    expect((await scim('DELETE', `/Users/${second.id}`)).status).toBe(409);
  });
});
