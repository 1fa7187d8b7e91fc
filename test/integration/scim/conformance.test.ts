/**
 * Every kind of answer this server gives, read by an independent SCIM
 * implementation (SCIMMY): its core User, Group, ResourceType and
 * ServiceProviderConfig schemas and its ListResponse parser refuse a wrong
 * type, a missing required attribute or a malformed list, as an identity
 * provider's client would.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import SCIMMY from 'scimmy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { GROUP, PATCH_OP, scimClient, USER } from './scim-client.js';

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

/** The resource as SCIMMY reads it on the way out of a service provider; throws where it breaks the schema. */
const asUser = (resource: unknown) =>
  SCIMMY.Schemas.User.definition.coerce(resource, 'out') as Record<string, unknown>;
const asGroup = (resource: unknown) =>
  SCIMMY.Schemas.Group.definition.coerce(resource, 'out') as Record<string, unknown>;

describe('SCIM answers, read by SCIMMY', () => {
  it('gives Users and Groups, single and listed, that the core schemas accept', async () => {
    const userName = `conform-${randomUUID().slice(0, 8)}@example.test`;
    const created = await scim<{ id: string }>('POST', '/Users', {
      schemas: [USER],
      userName,
      name: { givenName: 'Con', familyName: 'Form' },
      emails: [{ value: userName, type: 'work', primary: true }],
      externalId: 'ext-1',
    });
    expect(asUser(created.body)).toMatchObject({ userName, displayName: 'Con Form', active: true });
    const group = await scim<{ id: string }>('POST', '/Groups', {
      schemas: [GROUP],
      displayName: `conform-${randomUUID().slice(0, 8)}`,
      members: [{ value: created.body.id }],
    });
    expect(asGroup(group.body)).toMatchObject({ members: [{ value: created.body.id }] });

    const patch = {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    };
    // The request is a valid PatchOp by SCIMMY's reading too, and the answer a valid User.
    expect(() => new SCIMMY.Messages.PatchOp(patch as never)).not.toThrow();
    const patched = await scim('PATCH', `/Users/${created.body.id}`, patch);
    expect(asUser(patched.body)).toMatchObject({ active: false, groups: [{ value: group.body.id }] });

    for (const [path, read] of [
      [`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, asUser],
      [`/Groups?filter=${encodeURIComponent(`members eq "${created.body.id}"`)}`, asGroup],
    ] as const) {
      const listed = await scim('GET', path);
      const list = new SCIMMY.Messages.ListResponse(listed.body as never);
      expect(list.totalResults).toBe(1);
      expect(list.Resources).toHaveLength(1);
      read(list.Resources[0]);
    }
  });

  it('describes itself in the ServiceProviderConfig and ResourceType schemas', async () => {
    const config = await scim('GET', '/ServiceProviderConfig');
    const read = SCIMMY.Schemas.ServiceProviderConfig.definition.coerce(config.body, 'out') as Record<
      string,
      unknown
    >;
    expect(read).toMatchObject({ patch: { supported: true }, filter: { supported: true, maxResults: 200 } });
    const types = await scim('GET', '/ResourceTypes');
    const list = new SCIMMY.Messages.ListResponse(types.body as never);
    for (const type of list.Resources) SCIMMY.Schemas.ResourceType.definition.coerce(type, 'out');
    expect(list.Resources.map((t: { id?: string }) => t.id)).toEqual(['User', 'Group']);
  });

  it('refuses in the SCIM error schema, with status codes and scimTypes SCIMMY takes', async () => {
    const taken = `err-${randomUUID().slice(0, 8)}@example.test`;
    await scim('POST', '/Users', { schemas: [USER], userName: taken });
    const errors = [
      await scimClient(api.url, 'wrong')('GET', '/Users'),
      await scim('GET', `/Users/${randomUUID()}`),
      await scim('POST', '/Users', { schemas: [USER], userName: taken }),
      await scim('POST', '/Users', { schemas: [USER] }),
      await scim('GET', `/Users?filter=${encodeURIComponent('userName sw "a"')}`),
      await scim('PATCH', `/Groups/${randomUUID()}`, { schemas: [PATCH_OP], Operations: [{ op: 'jump' }] }),
    ];
    expect(errors.map((e) => e.status)).toEqual([401, 404, 409, 400, 400, 400]);
    for (const { body } of errors) {
      const { status, scimType, detail } = body as { status: string; scimType?: never; detail: string };
      const theirs = new SCIMMY.Messages.ErrorResponse({ status: Number(status) as 400, scimType, detail });
      expect(JSON.parse(JSON.stringify(theirs))).toEqual(body);
    }
  });

  it('checks itself: SCIMMY refuses what breaks the schema', () => {
    expect(() => asUser({ schemas: [USER], id: randomUUID(), active: true })).toThrow(/userName/);
    expect(() => asUser({ schemas: [USER], id: randomUUID(), userName: 'x', active: 'False' })).toThrow(
      /boolean/,
    );
  });
});
