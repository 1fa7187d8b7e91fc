/**
 * SCIM's Groups: membership is what AUTH_GROUP_ROLES turns into roles, so a
 * user added to a group over SCIM may do what the group's role allows on
 * their next request, and removed from it (or the group deleted) may not.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { databaseUrl } from '../../helpers/services.js';
import { createTestToken } from '../../helpers/users.js';
import { ERROR, GROUP, PATCH_OP, scimClient, USER } from './scim-client.js';

const SCIM_TOKEN = randomBytes(24).toString('base64url');
const ENG = `eng-${randomUUID().slice(0, 8)}`;
const projectId = randomUUID();

let db: Db;
let api: TestApi;
let scim: ReturnType<typeof scimClient>;

beforeAll(async () => {
  db = createDb(databaseUrl(), { max: 2 });
  // The project exists before the server starts: AUTH_GROUP_ROLES names it by id.
  await db.raw('insert into projects (id, name) values (?, ?)', [
    projectId,
    `scim-groups-${projectId.slice(0, 8)}`,
  ]);
  api = await startTestApi({
    AUTH_MODE: 'users',
    SCIM_TOKEN,
    AUTH_GROUP_ROLES: JSON.stringify({ [ENG]: { projects: { [projectId]: 'developer' } } }),
  });
  scim = scimClient(api.url, SCIM_TOKEN);
});
afterAll(async () => {
  await api?.close();
  await db?.destroy();
});

interface ScimGroup {
  id: string;
  displayName: string;
  members?: Array<{ value: string; display: string }>;
  meta: { resourceType: string; location: string };
}

async function scimUser(): Promise<{ id: string; token: string }> {
  const created = await scim<{ id: string }>('POST', '/Users', {
    schemas: [USER],
    userName: `member-${randomUUID().slice(0, 8)}@example.test`,
  });
  expect(created.status).toBe(201);
  return { id: created.body.id, token: await createTestToken(db, { userId: created.body.id }) };
}

/** A change only a developer of the project may make: a status a user would see. */
const createSchema = async (token: string) =>
  (
    await api.request(
      'POST',
      `/api/agent-server/schemas?project_id=${projectId}`,
      { name: `s-${randomUUID().slice(0, 8)}`, schema: { type: 'object' } },
      { authorization: `Bearer ${token}` },
    )
  ).status;

describe('SCIM Groups', () => {
  it('gives and takes the roles AUTH_GROUP_ROLES maps to the group, on the next request', async () => {
    const ann = await scimUser();
    expect(await createSchema(ann.token)).toBe(403);

    const created = await scim<ScimGroup>('POST', '/Groups', {
      schemas: [GROUP],
      displayName: ENG,
      members: [{ value: ann.id }],
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${api.url}/scim/v2/Groups/${created.body.id}`);
    expect(created.body).toMatchObject({
      schemas: [GROUP],
      displayName: ENG,
      meta: { resourceType: 'Group' },
    });
    expect(created.body.members!.map((m) => m.value)).toEqual([ann.id]);
    const groupId = created.body.id;
    expect(await createSchema(ann.token)).toBe(200);
    const user = await scim<{ groups: Array<{ value: string; display: string }> }>('GET', `/Users/${ann.id}`);
    expect(user.body.groups).toMatchObject([{ value: groupId, display: ENG }]);

    // Okta removes one member by a filtered path.
    const removed = await scim<ScimGroup>('PATCH', `/Groups/${groupId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${ann.id}"]` }],
    });
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual([]);
    expect(await createSchema(ann.token)).toBe(403);

    // Entra ID adds and removes with a list of values and capitalised ops.
    const entra = (op: string) =>
      scim('PATCH', `/Groups/${groupId}`, {
        schemas: [PATCH_OP],
        Operations: [{ op, path: 'members', value: [{ value: ann.id }] }],
      });
    expect((await entra('Add')).status).toBe(200);
    expect(await createSchema(ann.token)).toBe(200);
    expect((await entra('Remove')).status).toBe(200);
    expect(await createSchema(ann.token)).toBe(403);

    expect((await entra('Add')).status).toBe(200);
    expect((await scim('DELETE', `/Groups/${groupId}`)).status).toBe(204);
    expect((await scim('GET', `/Groups/${groupId}`)).status).toBe(404);
    expect(await createSchema(ann.token)).toBe(403);
  });

  it('filters by displayName and by member, leaves members out on request, and refuses duplicates and strangers', async () => {
    const [bo, cy] = [await scimUser(), await scimUser()];
    const name = `ops-${randomUUID().slice(0, 8)}`;
    const { body: group } = await scim<ScimGroup>('POST', '/Groups', {
      schemas: [GROUP],
      displayName: name,
      members: [{ value: bo.id }, { value: cy.id }],
    });
    const list = (query: string) =>
      scim<{ totalResults: number; Resources: ScimGroup[] }>('GET', `/Groups?${query}`);
    const byName = await list(
      `filter=${encodeURIComponent(`displayName eq "${name}"`)}&excludedAttributes=members`,
    );
    expect(byName.body.totalResults).toBe(1);
    expect(byName.body.Resources[0]).toMatchObject({ id: group.id, displayName: name });
    expect(byName.body.Resources[0]!.members).toBeUndefined();
    const byMember = await list(
      `filter=${encodeURIComponent(`displayName eq "${name}" and members eq "${cy.id}"`)}`,
    );
    expect(byMember.body.Resources[0]!.members!.map((m) => m.value).sort()).toEqual([bo.id, cy.id].sort());

    const duplicate = await scim('POST', '/Groups', { schemas: [GROUP], displayName: name });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });
    const stranger = await scim('PATCH', `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: randomUUID() }] }],
    });
    expect(stranger.status).toBe(400);
    expect(stranger.body).toMatchObject({ scimType: 'invalidValue' });

    // Okta's value-object replace, repeating the id; then PUT replaces the members outright.
    const renamed = await scim<ScimGroup>('PATCH', `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id: group.id, displayName: `${name}-renamed` } }],
    });
    expect(renamed.body.displayName).toBe(`${name}-renamed`);
    const replaced = await scim<ScimGroup>('PUT', `/Groups/${group.id}`, {
      schemas: [GROUP],
      displayName: name,
      members: [{ value: cy.id }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.members!.map((m) => m.value)).toEqual([cy.id]);
    // Adding a member already there changes nothing, and records nothing.
    const again = await scim('PATCH', `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: cy.id }] }],
    });
    expect(again.status).toBe(200);
    const audit = await db('audit_events')
      .where({ resource_id: group.id })
      .orderBy('at')
      .pluck<string[]>('action');
    expect(audit).toEqual(['group.create', 'group.update', 'group.update']);
  });
});
