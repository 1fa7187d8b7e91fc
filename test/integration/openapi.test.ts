import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRouter } from '../../api/http/api-router.js';
import { buildRouters } from '../../api/routes/index.js';
import { toOpenApiPath } from '../../api/openapi/openapi.js';
import { startTestApi, type TestApi } from '../helpers/api.js';

interface OpenApiDoc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { tags: string[]; parameters: Array<{ name: string; in: string }>; requestBody?: unknown }>
  >;
}

describe('OpenAPI document', () => {
  let api: TestApi;
  let doc: OpenApiDoc;
  beforeAll(async () => {
    api = await startTestApi();
    const res = await fetch(`${api.url}/api/agent-server/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as OpenApiDoc;
  });
  afterAll(async () => {
    await api.close();
  });

  it('documents every route the routers actually serve', () => {
    // Enumerate the koa routers' own layers, not the specs we recorded.
    const router = ApiRouter.mountAll(buildRouters(api.server.deps));
    const served = [router].flatMap((r) =>
      r.stack.flatMap((layer) =>
        layer.methods
          .filter((m) => m !== 'HEAD')
          .map((m) => `${m.toLowerCase()} ${toOpenApiPath(String(layer.path).replace(/\/$/, ''))}`),
      ),
    );
    expect(served.length).toBeGreaterThan(10);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    const missing = served.filter((r) => !documented.includes(r));
    expect(missing).toEqual([]);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('takes parameters and bodies from the joi schemas', () => {
    const createAgent = doc.paths['/api/agent-server/agents']?.post;
    expect(createAgent?.parameters).toContainEqual(
      expect.objectContaining({ name: 'project_id', in: 'query', required: true }),
    );
    const body = (
      createAgent?.requestBody as {
        content: {
          'application/json': { schema: { required: string[]; properties: Record<string, unknown> } };
        };
      }
    ).content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['name', 'model_id', 'prompt_id']));
    expect(body.properties).toHaveProperty('summarizer_type');
    const getProject = doc.paths['/api/agent-server/projects/{id}']?.get;
    expect(getProject?.parameters).toContainEqual(expect.objectContaining({ name: 'id', in: 'path' }));
  });

  it('names its server (relative, so one document fits every host) and declares the optional bearer scheme', () => {
    const full = doc as unknown as {
      servers: Array<{ url: string }>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(full.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(full.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(full.paths['/api/agent-server/approvals']?.get?.security).toEqual([
      { adminToken: [] },
      { session: [] },
      {},
    ]);
    expect(full.paths['/api/agent-server/approvals']?.get).toMatchObject({ 'x-permission': 'project:read' });
    expect(full.paths['/api/agent-server/providers']?.post).toMatchObject({ 'x-permission': 'org:admin' });
  });

  it("documents the console's lists: run status as an array of the run statuses, usage buckets", () => {
    for (const path of [
      '/api/agent-server/runs',
      '/api/agent-server/conversations/{conversation_id}/runs',
      '/api/agent-server/agents/{id}/runs',
      '/api/agent-server/approvals',
      '/api/agent-server/usage',
      '/api/agent-server/virtual-keys/{id}/usage/series',
    ])
      expect(doc.paths[path]?.get, path).toBeDefined();
    const status = doc.paths['/api/agent-server/agents/{id}/runs']!.get!.parameters.find(
      (p) => p.name === 'status',
    ) as { schema: { type: string; items: { enum: string[] } } } | undefined;
    expect(status?.schema.type).toBe('array');
    expect(status?.schema.items.enum).toEqual(expect.arrayContaining(['awaiting_approval', 'failed']));
    const bucket = doc.paths['/api/agent-server/usage']!.get!.parameters.find((p) => p.name === 'bucket') as
      { schema: { enum: string[] } } | undefined;
    expect(bucket?.schema.enum).toEqual(['hour', 'day']);
  });

  it('serves a human docs page and its assets', async () => {
    const page = await fetch(`${api.url}/api/agent-server/docs`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('openapi.json');
    const js = await fetch(`${api.url}/api/agent-server/docs/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    expect((await fetch(`${api.url}/api/agent-server/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});
