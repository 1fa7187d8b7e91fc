/**
 * SCIM's Users in users mode, as identity providers call them: SCIM_TOKEN
 * alone opens the door (SCIM's error schema otherwise), the users table is
 * what it shows, and its filters, paging and uniqueness behave as RFC 7644 says.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createTestUser } from '../../helpers/users.js';
import { ERROR, PATCH_OP, scimClient, USER } from './scim-client.js';

const SCIM_TOKEN = randomBytes(24).toString('base64url');

let api: TestApi;
let scim: ReturnType<typeof scimClient>;

beforeAll(async () => {
  api = await startTestApi({ AUTH_MODE: 'users', SCIM_TOKEN });
  scim = scimClient(api.url, SCIM_TOKEN);
});
afterAll(async () => {
  await api?.close();
});

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}@example.test`;

interface ScimUser {
  id: string;
  userName: string;
  displayName?: string;
  name?: { formatted?: string };
  emails?: Array<{ value: string; primary: boolean }>;
  externalId?: string;
  active: boolean;
  groups: unknown[];
  meta: { resourceType: string; created: string; lastModified: string; location: string };
}
interface ListResponse<T> {
  schemas: string[];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: T[];
}

describe('SCIM credential', () => {
  it('answers 401 in SCIM error shape without the token, with a wrong one, and with a user token', async () => {
    const user = await createTestUser(api.server.deps.db, { orgRole: 'owner' });
    for (const token of [undefined, 'not-the-scim-token', user.token]) {
      const res = await scimClient(api.url, token)('GET', '/Users');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.headers.get('content-type')).toMatch(/^application\/scim\+json/);
      expect(res.body).toMatchObject({ schemas: [ERROR], status: '401' });
    }
  });

  it('answers a method a path does not take with 405 behind the SCIM token, 401 without it', async () => {
    const wrong = await scim('PATCH', '/Users', {});
    expect(wrong.status).toBe(405);
    expect(wrong.body).toMatchObject({ schemas: [ERROR], status: '405' });
    const refused = await scimClient(api.url, undefined)('PATCH', '/Users', {});
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ schemas: [ERROR], status: '401' });
  });

  it('is not a user credential: SCIM_TOKEN opens nothing outside /scim', async () => {
    const res = await fetch(`${api.url}/api/agent-server/projects`, {
      headers: { authorization: `Bearer ${SCIM_TOKEN}` },
    });
    expect(res.status).toBe(401);
  });

  it('is documented in the OpenAPI document as taking SCIM_TOKEN alone', async () => {
    const res = await fetch(`${api.url}/api/agent-server/openapi.json`);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { security: unknown[]; tags: string[] }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.paths['/scim/v2/Users']?.post).toMatchObject({
      tags: ['SCIM provisioning'],
      security: [{ scimToken: [] }],
    });
    expect(doc.components.securitySchemes.scimToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('answers 401 to everyone in users mode when no SCIM_TOKEN is configured', async () => {
    const bare = await startTestApi({ AUTH_MODE: 'users' });
    try {
      for (const token of [undefined, SCIM_TOKEN]) {
        const res = await scimClient(bare.url, token)('GET', '/ServiceProviderConfig');
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ schemas: [ERROR], status: '401' });
      }
    } finally {
      await bare.close();
    }
  });

  it('is served in open mode only once SCIM_TOKEN is set, and then behind it', async () => {
    const open = await startTestApi({ AUTH_MODE: 'open' });
    const openWithToken = await startTestApi({ AUTH_MODE: 'open', SCIM_TOKEN });
    try {
      const absent = await scimClient(open.url, undefined)('GET', '/Users');
      expect(absent.status).toBe(404);
      expect(absent.body).toMatchObject({ schemas: [ERROR], status: '404' });
      expect((await scimClient(openWithToken.url, undefined)('GET', '/Users')).status).toBe(401);
      expect((await scimClient(openWithToken.url, SCIM_TOKEN)('GET', '/Users')).status).toBe(200);
    } finally {
      await open.close();
      await openWithToken.close();
    }
  });
});

describe('SCIM Users', () => {
  it('creates a user (201, Location, meta) and reads it back', async () => {
    const userName = unique('bo');
    const created = await scim<ScimUser>('POST', '/Users', {
      schemas: [USER],
      userName,
      externalId: 'okta-00u1',
      name: { givenName: 'Bo', familyName: 'Lind' },
      emails: [
        { value: 'other@example.test', type: 'home' },
        { value: userName, type: 'work', primary: true },
      ],
      phoneNumbers: [{ value: '+1 555 0100', type: 'work' }],
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/scim\+json/);
    const location = `${api.url}/scim/v2/Users/${created.body.id}`;
    expect(created.headers.get('location')).toBe(location);
    expect(created.body).toMatchObject({
      schemas: [USER],
      userName,
      displayName: 'Bo Lind',
      externalId: 'okta-00u1',
      emails: [{ value: userName, primary: true }],
      active: true,
      groups: [],
      meta: { resourceType: 'User', location },
    });
    const read = await scim<ScimUser>('GET', `/Users/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const row: unknown = await api.server.deps.db('users').where({ id: created.body.id }).first();
    expect(row).toMatchObject({ user_name: userName, email: userName, org_role: 'member', active: true });
  });

  it('refuses a userName already taken, in any case, with 409 uniqueness', async () => {
    const userName = unique('cy');
    expect((await scim('POST', '/Users', { schemas: [USER], userName })).status).toBe(201);
    const again = await scim('POST', '/Users', { schemas: [USER], userName: userName.toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });
  });

  it('filters by userName (any case) and externalId, and pages with startIndex and count', async () => {
    const externalId = randomUUID();
    const names = [unique('da'), unique('da'), unique('da')];
    for (const userName of names) await scim('POST', '/Users', { schemas: [USER], userName, externalId });
    const one = await scim<ListResponse<ScimUser>>(
      'GET',
      `/Users?filter=${encodeURIComponent(`userName eq "${names[1]!.toUpperCase()}"`)}`,
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(one.body.Resources.map((u) => u.userName)).toEqual([names[1]]);
    const none = await scim<ListResponse<ScimUser>>(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "nobody@x"')}`,
    );
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });
    const page = await scim<ListResponse<ScimUser>>(
      'GET',
      `/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}&startIndex=2&count=1`,
    );
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources.map((u) => u.userName)).toEqual([names[1]]);
    const only = await scim<ListResponse<Record<string, unknown>>>(
      'GET',
      `/Users?filter=${encodeURIComponent(`userName eq "${names[0]}"`)}&attributes=userName`,
    );
    expect(Object.keys(only.body.Resources[0]!).sort()).toEqual(['id', 'schemas', 'userName']);
    const counted = await scim<ListResponse<ScimUser>>(
      'GET',
      `/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}&count=0`,
    );
    expect(counted.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
    const bad = await scim('GET', `/Users?filter=${encodeURIComponent('userName co "a"')}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [ERROR], status: '400', scimType: 'invalidFilter' });
  });

  it('patches by path and by value object, and replaces with PUT', async () => {
    const userName = unique('ed');
    const { body: user } = await scim<ScimUser>('POST', '/Users', {
      schemas: [USER],
      userName,
      displayName: 'Ed Old',
    });
    const patched = await scim<ScimUser>('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'displayName', value: 'Ed New' },
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ed.new@example.test' },
        { op: 'Add', value: { externalId: 'entra-1', 'name.givenName': 'Ed' } },
        {
          op: 'replace',
          path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
          value: 'R&D',
        },
      ],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      displayName: 'Ed New',
      emails: [{ value: 'ed.new@example.test', primary: true }],
      externalId: 'entra-1',
    });
    // Okta's value-object form repeats the id.
    const okta = await scim<ScimUser>('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id: user.id, active: false } }],
    });
    expect(okta.status).toBe(200);
    expect(okta.body.active).toBe(false);
    const removed = await scim<ScimUser>('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: 'emails' }],
    });
    expect(removed.body.emails).toBeUndefined();
    const readOnly = await scim('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'id', value: randomUUID() }],
    });
    expect(readOnly.body).toMatchObject({ status: '400', scimType: 'mutability' });
    const badValue = await scim('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'active', value: 'maybe' }],
    });
    expect(badValue.body).toMatchObject({ status: '400', scimType: 'invalidValue' });

    const replaced = await scim<ScimUser>('PUT', `/Users/${user.id}`, {
      schemas: [USER],
      userName,
      name: { formatted: 'Ed Replaced' },
    });
    expect(replaced.status).toBe(200);
    // Left out of the PUT, active stays false: a replace that forgets it reactivates nobody.
    expect(replaced.body).toMatchObject({ displayName: 'Ed Replaced', active: false });
    expect(replaced.body.externalId).toBeUndefined();
    expect(new Date(replaced.body.meta.lastModified).getTime()).toBeGreaterThanOrEqual(
      new Date(replaced.body.meta.created).getTime(),
    );
  });

  it('refuses a body that is not JSON with 400 invalidSyntax', async () => {
    const res = await fetch(`${api.url}/scim/v2/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SCIM_TOKEN}`, 'content-type': 'application/scim+json' },
      body: '{"userName": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ schemas: [ERROR], status: '400', scimType: 'invalidSyntax' });
  });

  it('deletes a user (204, then 404), freeing its userName', async () => {
    const userName = unique('fi');
    const { body: user } = await scim<ScimUser>('POST', '/Users', { schemas: [USER], userName });
    expect((await scim('DELETE', `/Users/${user.id}`)).status).toBe(204);
    const gone = await scim('GET', `/Users/${user.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ schemas: [ERROR], status: '404' });
    expect((await scim('GET', '/Users/not-a-uuid')).status).toBe(404);
    expect((await scim('POST', '/Users', { schemas: [USER], userName })).status).toBe(201);
  });

  it('records each change in the audit log as SCIM', async () => {
    const userName = unique('gu');
    const { body: user } = await scim<ScimUser>('POST', '/Users', { schemas: [USER], userName });
    await scim('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    const events = await api.server.deps.db('audit_events').where({ resource_id: user.id }).orderBy('at');
    expect(events.map((e: { action: string }) => e.action)).toEqual(['user.create', 'user.deactivate']);
    expect(events[1]).toMatchObject({
      actor_type: 'scim',
      actor_name: 'scim',
      method: 'PATCH',
      status: 200,
    });
    expect(events[1]).toMatchObject({
      before: { active: true },
      after: { active: false, user_name: userName },
    });
  });
});

describe('SCIM discovery', () => {
  it('describes what it supports, its resource types and their schemas', async () => {
    const config = await scim('GET', '/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      patch: { supported: true },
      filter: { supported: true, maxResults: 200 },
      bulk: { supported: false },
      authenticationSchemes: [{ type: 'oauthbearertoken' }],
    });
    const types = await scim<ListResponse<{ id: string; endpoint: string; schema: string }>>(
      'GET',
      '/ResourceTypes',
    );
    expect(types.body.Resources.map((t) => [t.id, t.endpoint, t.schema])).toEqual([
      ['User', '/Users', USER],
      ['Group', '/Groups', 'urn:ietf:params:scim:schemas:core:2.0:Group'],
    ]);
    expect((await scim('GET', '/ResourceTypes/User')).body).toMatchObject({
      id: 'User',
      meta: { resourceType: 'ResourceType' },
    });
    const schemas = await scim<ListResponse<{ id: string; attributes: Array<{ name: string }> }>>(
      'GET',
      '/Schemas',
    );
    const user = schemas.body.Resources.find((s) => s.id === USER)!;
    expect(user.attributes.map((a) => a.name)).toEqual(
      expect.arrayContaining(['userName', 'emails', 'active']),
    );
    expect((await scim('GET', `/Schemas/${USER}`)).status).toBe(200);
    expect((await scim('GET', '/Schemas/urn:nope')).body).toMatchObject({ schemas: [ERROR], status: '404' });
  });
});
