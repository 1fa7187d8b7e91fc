/**
 * No secret in any audit row: every credential the API takes (a provider's
 * key and headers, an MCP server's headers and OAuth client secret, a virtual
 * key's secret, a webhook's signing secret) is created, changed and rotated,
 * then every row written meanwhile is searched for each value.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProject } from '../../helpers/factories.js';
import {
  createProvider,
  createVirtualKey,
  fakeApiKey,
  PROVIDERS,
  VIRTUAL_KEYS,
} from '../../helpers/factories/config.js';

const MCP = '/api/agent-server/mcp-servers';
const WEBHOOKS = '/api/agent-server/webhooks';
const secret = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

describe('secrets in the audit log', () => {
  let api: TestApi;
  beforeAll(async () => {
    // Open mode: the trail is written in both modes.
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('never holds a credential, in any row', async () => {
    const since = new Date();
    const secrets: string[] = [];
    const keep = (value: string) => (secrets.push(value), value);
    const ok = async (res: Promise<{ status: number; text: string }>) => {
      const r = await res;
      expect(r.status, r.text).toBe(200);
      return r as { status: number; text: string; body: { data: Record<string, unknown> & { id: string } } };
    };

    const project = await createProject(api);
    const provider = await createProvider(api, {
      api_key: keep(fakeApiKey()),
      headers: { 'x-vendor-auth': keep(secret('hdr-')), 'x-region': 'eu' },
      base_url: `https://user:${keep(secret('pw'))}@vendor.example/v1`,
    });
    await ok(api.request('PATCH', `${PROVIDERS}/${provider.id}`, { api_key: keep(fakeApiKey()) }));
    await ok(
      api.request('PATCH', `${PROVIDERS}/${provider.id}`, {
        headers: { authorization: `Bearer ${keep(secret('tok'))}` },
      }),
    );

    const mcp = await ok(
      api.request('POST', `${MCP}?project_id=${project.id}`, {
        name: 'with-secrets',
        endpoint: `https://mcp.example/mcp?api_key=${keep(secret('q'))}`,
        headers: { authorization: `Bearer ${keep(secret('mcp'))}` },
        oauth: {
          client_id: 'client',
          client_secret: keep(secret('cs')),
          token_endpoint_auth_method: 'client_secret_post',
        },
      }),
    );
    await ok(
      api.request('PATCH', `${MCP}/${mcp.body.data.id}`, {
        headers: { 'x-api-key': keep(secret('mcp2')) },
        oauth: { client_id: 'client', client_secret: keep(secret('cs2')) },
      }),
    );

    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    keep(key.secret_key);
    const rotated = await ok(api.request('POST', `${VIRTUAL_KEYS}/${key.id}/rotate`));
    keep(rotated.body.data.secret_key as string);

    const hook = await ok(
      api.request('POST', `${WEBHOOKS}?project_id=${project.id}`, {
        url: 'https://hooks.example.com/in',
        events: ['eval.completed'],
      }),
    );
    keep(hook.body.data.secret as string);
    await ok(api.request('DELETE', `${WEBHOOKS}/${hook.body.data.id}`));
    await ok(api.request('DELETE', `${MCP}/${mcp.body.data.id}`));

    const db = api.server.deps.db;
    const rows = await db('audit_events').where('at', '>=', since).select('*');
    const mine = rows.filter((r: { resource_id: string | null }) =>
      [provider.id, mcp.body.data.id, key.id, hook.body.data.id].includes(r.resource_id ?? ''),
    );
    // Each change above is a row, with its fields: the search below looks at something.
    expect(mine.length).toBeGreaterThanOrEqual(10);
    expect(mine.filter((r: { after: unknown }) => r.after !== null).length).toBeGreaterThanOrEqual(8);
    const text = JSON.stringify(rows);
    expect(secrets.filter((s) => text.includes(s))).toEqual([]);
    // Sealed columns are not there at all, not even redacted.
    expect(text).not.toMatch(/_enc"|_hash"/);
    const providerUpdate = mine.find((r: { action: string }) => r.action === 'provider.update') as {
      after: { headers?: unknown };
    };
    expect(providerUpdate).toBeDefined();
  });
});
