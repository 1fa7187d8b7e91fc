/**
 * Hostile input that used to answer 500 (and log an error) instead of a 4xx in
 * the right shape: NUL characters and lone surrogates in any string (Postgres
 * stores neither: text refuses NUL, jsonb refuses both), `%00` in query and
 * path values, JSON nested thousands deep (recursive code overflows the
 * stack), a method no route implements, and a Gemini model path that is not
 * valid percent-encoding. Each case is a 400 naming the field (or a 501 / the
 * vendor's own 400), nothing is written, and nothing is logged as an error.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Envelope, HttpResult, TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createModel, MODELS, PROVIDERS } from '../helpers/factories/config.js';
import { createConversation, createPrompt, createSchema } from '../helpers/factories/content.js';
import { FORMATS, startHarness, type Harness } from './gateway/gateway-harness.js';
import { chatRequest, expectShape } from './gateway/raw-requests.js';

const BASE = '/api/agent-server';
const NUL = 'a\u0000b';
const LONE = '\ud800x';

let h: Harness;
let api: TestApi;
let projectId = '';
let modelId = '';
let promptId = '';
let promptName = '';
let schemaId = '';
let mcpId = '';
let agentId = '';
let conversationId = '';
let logMark = 0;

beforeAll(async () => {
  h = await startHarness();
  api = h.api;
  projectId = (await createProject(api)).id;
  modelId = (await createModel(api, projectId)).id;
  const prompt = await createPrompt(api, projectId);
  promptId = prompt.id;
  promptName = prompt.name;
  schemaId = (await createSchema(api, projectId)).id;
  const mcp = await api.request<{ id: string }>('POST', `${BASE}/mcp-servers?project_id=${projectId}`, {
    name: uniqueName('mcp'),
    endpoint: 'http://127.0.0.1:9/mcp',
  });
  mcpId = mcp.body.data.id;
  const agent = await api.request<{ id: string }>('POST', `${BASE}/agents?project_id=${projectId}`, {
    name: uniqueName('agent'),
    model_id: modelId,
    prompt_id: promptId,
  });
  agentId = agent.body.data.id;
  conversationId = (await createConversation(api, projectId)).id;
});
afterAll(() => h?.close());
beforeEach(() => {
  logMark = api.logs.lines.length;
  FORMATS.forEach((f) => h.vendors[f].reset());
});

/** Lines logged at error level (pino 50) or above since the test began. */
const errorLogs = () =>
  api.logs.lines.slice(logMark).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

/** A 400 envelope whose fields name `field`; nothing logged as an error. */
function expectFieldError(res: HttpResult<Envelope>, field: string, type?: RegExp): void {
  const where = `${res.status} ${res.text.slice(0, 400)}`;
  expect(res.status, where).toBe(400);
  expect(res.body, where).toMatchObject({ error: true, message: 'Invalid request', data: {}, status: 400 });
  const fields = res.body.errorDetails.fields ?? [];
  expect(
    fields.map((f) => f.field),
    where,
  ).toContain(field);
  if (type) expect(fields.find((f) => f.field === field)?.type, where).toMatch(type);
  expect(errorLogs()).toEqual([]);
}

/** Sets `value` at a dotted path of a copy of `body` (numeric segments index arrays). */
function withValue(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let at = copy;
  for (let i = 0; i < keys.length - 1; i++) {
    at[keys[i]!] ??= /^\d+$/.test(keys[i + 1]!) ? [] : {};
    at = at[keys[i]!] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
  return copy;
}

interface Case {
  method: string;
  path: () => string;
  body: () => Record<string, unknown>;
  /** Dotted paths of the string fields (fixed and free-form) the route stores or looks up. */
  fields: string[];
}

const CASES: Record<string, Case> = {
  'POST /projects': {
    method: 'POST',
    path: () => `${BASE}/projects`,
    body: () => ({ name: uniqueName('p'), description: 'd' }),
    fields: ['name', 'description'],
  },
  'PATCH /projects/:id': {
    method: 'PATCH',
    path: () => `${BASE}/projects/${projectId}`,
    body: () => ({ description: 'd' }),
    fields: ['name', 'description'],
  },
  'POST /providers': {
    method: 'POST',
    path: () => PROVIDERS,
    body: () => ({
      name: uniqueName('prov').toLowerCase(),
      provider_type: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: 'sk-test-123456789012',
      headers: { 'x-a': 'b' },
    }),
    fields: ['name', 'api_key', 'base_url', 'headers.x-a'],
  },
  'POST /virtual-keys': {
    method: 'POST',
    path: () => `${BASE}/virtual-keys`,
    body: () => ({
      name: uniqueName('vk'),
      providers: [{ provider_id: h.providers.openai.id, model_names: ['m'] }],
    }),
    fields: ['name', 'providers.0.model_names.0', 'fallbacks.0'],
  },
  'POST /models': {
    method: 'POST',
    path: () => `${MODELS}?project_id=${projectId}`,
    body: () => ({
      name: uniqueName('m'),
      model_id: 'x',
      provider_type: 'openai',
      parameters: { temperature: 1 },
    }),
    fields: ['name', 'model_id', 'parameters.stop', 'parameters.custom', 'parameters.nested.deeper'],
  },
  'PATCH /models/:id': {
    method: 'PATCH',
    path: () => `${MODELS}/${modelId}`,
    body: () => ({ parameters: { temperature: 1 } }),
    fields: ['name', 'model_id', 'parameters.custom'],
  },
  'POST /prompts': {
    method: 'POST',
    path: () => `${BASE}/prompts?project_id=${projectId}`,
    body: () => ({ name: uniqueName('pr'), template: 'Hi {{who}}', commit_message: 'c' }),
    fields: ['name', 'template', 'commit_message'],
  },
  'POST /prompts/:name/versions': {
    method: 'POST',
    path: () => `${BASE}/prompts/${promptName}/versions?project_id=${projectId}`,
    body: () => ({ template: 'Hello {{who}}', commit_message: 'c' }),
    fields: ['template', 'commit_message'],
  },
  'POST /schemas': {
    method: 'POST',
    path: () => `${BASE}/schemas?project_id=${projectId}`,
    body: () => ({ name: uniqueName('s'), schema: { type: 'object' } }),
    fields: ['name', 'description', 'schema.description', 'schema.properties.a.pattern'],
  },
  'PATCH /schemas/:id': {
    method: 'PATCH',
    path: () => `${BASE}/schemas/${schemaId}`,
    body: () => ({ description: 'd' }),
    fields: ['description', 'schema.pattern'],
  },
  'POST /mcp-servers': {
    method: 'POST',
    path: () => `${BASE}/mcp-servers?project_id=${projectId}`,
    body: () => ({ name: uniqueName('mcp'), endpoint: 'http://127.0.0.1:9/mcp', headers: { 'X-A': 'b' } }),
    fields: ['name', 'headers.X-A'],
  },
  'POST /agents': {
    method: 'POST',
    path: () => `${BASE}/agents?project_id=${projectId}`,
    body: () => ({ name: uniqueName('a'), model_id: modelId, prompt_id: promptId }),
    fields: ['name', 'description', 'mcp_servers.0.tool_filters.0'],
  },
  'PATCH /agents/:id': {
    method: 'PATCH',
    path: () => `${BASE}/agents/${agentId}`,
    body: () => ({ description: 'd' }),
    fields: ['name', 'description'],
  },
  'POST /conversations': {
    method: 'POST',
    path: () => `${BASE}/conversations?project_id=${projectId}`,
    body: () => ({ namespace: 'ns', context: { who: 'x' } }),
    fields: ['id', 'namespace', 'context.who', 'context.list.0'],
  },
  'PATCH /conversations/:id': {
    method: 'PATCH',
    path: () => `${BASE}/conversations/${conversationId}?project_id=${projectId}`,
    body: () => ({ context: { who: 'x' } }),
    fields: ['namespace', 'context.who'],
  },
  'POST /converse': {
    method: 'POST',
    path: () => `${BASE}/converse?project_id=${projectId}`,
    body: () => ({ agent_id: agentId, message: 'hi', context: { who: 'x' } }),
    fields: ['message', 'message.0.text', 'context.who', 'namespace', 'conversation_id'],
  },
};

/** The mcp entry needs its server id; content parts need their type. */
function hostileBody(c: Case, field: string, value: string): Record<string, unknown> {
  let body = c.body();
  if (field.startsWith('mcp_servers.')) body = withValue(body, 'mcp_servers.0.mcp_server_id', mcpId);
  if (field === 'message.0.text') body = withValue(body, 'message', [{ type: 'text', text: 'x' }]);
  return withValue(body, field, value);
}

describe('NUL characters and lone surrogates in stored strings', () => {
  for (const [name, c] of Object.entries(CASES)) {
    for (const field of c.fields) {
      it(`${name} with a NUL in ${field} is a 400 naming it`, async () => {
        const res = await api.request(c.method, c.path(), hostileBody(c, field, NUL));
        expectFieldError(res, field, /^string\.nul$/);
      });
      it(`${name} with a lone surrogate in ${field} is a 400 naming it`, async () => {
        const res = await api.request(c.method, c.path(), hostileBody(c, field, LONE));
        expectFieldError(res, field, /^string\.surrogate$/);
      });
    }
  }

  it('a NUL or a lone surrogate in a key of a free-form object names the object', async () => {
    const c = CASES['POST /models']!;
    for (const key of [NUL, LONE]) {
      const res = await api.request('POST', c.path(), { ...c.body(), parameters: { [key]: 1 } });
      expectFieldError(res, 'parameters');
    }
    const conv = await api.request('POST', CASES['POST /conversations']!.path(), {
      context: { ok: { [NUL]: 'x' } },
    });
    expectFieldError(conv, 'context.ok');
  });

  it('a surrogate pair (an emoji) is fine and stored as sent', async () => {
    const res = await api.request<{ name: string; description: string }>('POST', `${BASE}/projects`, {
      name: uniqueName('😀'),
      description: 'ok 😀 \ud83d\ude00',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.description).toBe('ok 😀 😀');
  });

  it('a hostile request writes nothing', async () => {
    const before = await api.request<unknown[]>('GET', `${BASE}/projects?limit=200`);
    const name = uniqueName('nul');
    await api.request('POST', `${BASE}/projects`, { name, description: NUL });
    const after = await api.request<Array<{ name: string }>>('GET', `${BASE}/projects?limit=200`);
    expect(after.body.data.map((p) => p.name)).not.toContain(name);
    expect(after.body.data.length).toBeGreaterThanOrEqual(before.body.data.length);
  });
});

describe('%00 in query and path values (a lone surrogate cannot travel in a URL: it arrives as U+FFFD)', () => {
  const cases: Array<[string, string, string]> = [
    ['GET /agents/by-name?name=%00', `${BASE}/agents/by-name?name=%00`, 'name'],
    ['GET /agents/by-name?name=a%00b&project_id', `${BASE}/agents/by-name?name=a%00b&project_id=PID`, 'name'],
    ['GET /prompts/by-name?name=%00', `${BASE}/prompts/by-name?name=%00`, 'name'],
    ['GET /prompts/%00/versions', `${BASE}/prompts/%00/versions`, 'name'],
    ['DELETE /prompts/a%00b', `${BASE}/prompts/a%00b`, 'name'],
    ['GET /prompts/:name/versions/%00', `${BASE}/prompts/PNAME/versions/%00`, 'version'],
    ['GET /conversations/a%00b', `${BASE}/conversations/a%00b`, 'conversation_id'],
    ['GET /conversations?namespace=%00', `${BASE}/conversations?project_id=PID&namespace=%00`, 'namespace'],
    ['GET /agents/%00', `${BASE}/agents/%00`, 'id'],
    ['GET /projects?limit=%00', `${BASE}/projects?limit=%00`, 'limit'],
  ];
  for (const [name, raw, field] of cases) {
    it(`${name} is a 400 naming ${field}`, async () => {
      const path = raw.replace('PID', projectId).replace('PNAME', promptName);
      const res = await api.request(name.split(' ')[0]!, path);
      expect(res.status, res.text).toBe(400);
      expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
      expect(errorLogs()).toEqual([]);
    });
  }
});

describe('JSON nested thousands deep', () => {
  /** Built as text: JSON.stringify itself overflows the stack on such values. */
  const nest = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
  /** `body` as JSON with `value` (raw JSON text) at its key `key`. */
  const withRaw = (body: Record<string, unknown>, key: string, value: string) =>
    `${JSON.stringify(body).slice(0, -1)},${JSON.stringify(key)}:${value}}`;

  it('model parameters nested 10,000 deep are a 400 naming parameters', async () => {
    const body = { name: uniqueName('deep'), model_id: 'x', provider_type: 'openai' };
    const res = await api.request(
      'POST',
      `${MODELS}?project_id=${projectId}`,
      withRaw(body, 'parameters', nest(10_000)),
    );
    expectFieldError(res, 'parameters', /^object\.depth$/);
  });

  it('deep JSON in every free-form field is a 400 naming it', async () => {
    const deep = nest(10_000);
    expectFieldError(
      await api.request('PATCH', `${MODELS}/${modelId}`, withRaw({ model_id: 'x' }, 'parameters', deep)),
      'parameters',
      /^object\.depth$/,
    );
    expectFieldError(
      await api.request(
        'POST',
        `${BASE}/schemas?project_id=${projectId}`,
        withRaw({ name: uniqueName('s') }, 'schema', deep),
      ),
      'schema',
      /^object\.depth$/,
    );
    expectFieldError(
      await api.request(
        'POST',
        `${BASE}/conversations?project_id=${projectId}`,
        withRaw({ namespace: 'ns' }, 'context', deep),
      ),
      'context',
      /^object\.depth$/,
    );
    expectFieldError(
      await api.request(
        'POST',
        `${BASE}/converse?project_id=${projectId}`,
        withRaw({ agent_id: agentId }, 'message', `[${deep}]`),
      ),
      'message',
      /^object\.depth$/,
    );
  });

  it('a body that is itself an array nested 10,000 deep is a 400 naming body', async () => {
    const res = await api.request('POST', `${BASE}/projects`, `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    expectFieldError(res, 'body', /^object\.depth$/);
  });

  it('64 levels are accepted, 65 are not', async () => {
    // The body is level 1, `parameters` level 2: 62 more levels below it make 64.
    const body = {
      name: uniqueName('m64'),
      model_id: 'x',
      provider_type: 'openai',
      provider_id: h.providers.openai.id,
    };
    const ok = await api.request(
      'POST',
      `${MODELS}?project_id=${projectId}`,
      withRaw(body, 'parameters', nest(62, '{}')),
    );
    expect(ok.status, ok.text).toBe(200);
    const over = await api.request(
      'POST',
      `${MODELS}?project_id=${projectId}`,
      withRaw({ ...body, name: uniqueName('m65') }, 'parameters', nest(63, '{}')),
    );
    expectFieldError(over, 'parameters', /^object\.depth$/);
  });
});

describe('methods and framework statuses', () => {
  it('PROPFIND /projects is a 501 envelope and no error log', async () => {
    const res = await api.request('PROPFIND', `${BASE}/projects`);
    expect(res.status).toBe(501);
    expect(res.body).toEqual({
      error: true,
      message: 'Not implemented',
      data: {},
      status: 501,
      errorDetails: {},
    });
    expect(errorLogs()).toEqual([]);
  });

  it("PROPFIND on a gateway path is a 405 in the vendor's shape and no error log", async () => {
    const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, { method: 'PROPFIND' });
    expect(res.status).toBe(405);
    expect(expectShape('openai', await res.json())).toMatch(/method/);
    expect(errorLogs()).toEqual([]);
  });

  it('a method a path does not allow is still a 405 envelope', async () => {
    const res = await api.request('PUT', `${BASE}/projects`, {});
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ error: true, message: 'Method not allowed', status: 405 });
    expect(errorLogs()).toEqual([]);
  });
});

describe('gateway', () => {
  const geminiUrl = (model: string) => `${api.url}/api/gateway/gemini/v1beta/models/${model}:generateContent`;
  const geminiBody = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  const postGemini = (model: string, headers: Record<string, string> = { 'x-goog-api-key': h.secret }) =>
    fetch(geminiUrl(model), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: geminiBody,
    });

  it('a Gemini model path that is not valid percent-encoding is a 400 in Gemini shape, with or without a key', async () => {
    for (const model of ['%E0%A4%A', '%ED%A0%80x']) {
      for (const headers of [{}, { 'x-goog-api-key': h.secret }] as Array<Record<string, string>>) {
        const res = await postGemini(model, headers);
        const body = (await res.json()) as { error: { code: number; status: string } };
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(expectShape('gemini', body)).toMatch(/model/);
        expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      }
    }
    expect(errorLogs()).toEqual([]);
    expect(h.vendors.gemini.received).toHaveLength(0);
  });

  for (const surface of FORMATS) {
    it(`${surface}: a model name with a NUL or a lone surrogate is a 400 in the vendor shape; usage keeps being written`, async () => {
      const provider = h.providers[surface].name;
      const asked =
        surface === 'gemini' ? [`${provider}/a%00b`] : [`${provider}/${NUL}`, `${provider}/${LONE}`, LONE];
      for (const model of asked) {
        const res = await chatRequest(api, surface, model, { secret: h.secret });
        const text = await res.text();
        expect(res.status, text).toBe(400);
        expect(expectShape(surface, JSON.parse(text))).toMatch(/model/);
      }
      expect(h.vendors[surface].received).toHaveLength(0);
      // A good call afterwards is metered: the usage writer was not poisoned by a bad row.
      const before = await api.request<{ totals: { requests: number } }>(
        'GET',
        `${BASE}/virtual-keys/${h.keyId}/usage`,
      );
      const ok = await chatRequest(api, surface, `${provider}/good`, { secret: h.secret });
      expect(ok.status).toBe(200);
      const usage = await api.request<{ totals: { requests: number } }>(
        'GET',
        `${BASE}/virtual-keys/${h.keyId}/usage`,
      );
      expect(usage.status, usage.text).toBe(200);
      expect(usage.body.data.totals.requests).toBe(before.body.data.totals.requests + 1);
      expect(errorLogs()).toEqual([]);
    });
  }

  it('a chat body nested 10,000 deep is a 400 in the vendor shape, not a 500', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const requests = {
      openai: [
        '/openai/v1/chat/completions',
        { authorization: `Bearer ${h.secret}` },
        { model: `${h.providers.openai.name}/m`, messages: [{ role: 'user', content: 'hi' }] },
      ],
      anthropic: [
        '/anthropic/v1/messages',
        { 'x-api-key': h.secret, 'anthropic-version': '2023-06-01' },
        {
          model: `${h.providers.anthropic.name}/m`,
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
        },
      ],
      gemini: [
        `/gemini/v1beta/models/${h.providers.gemini.name}/m:generateContent`,
        { 'x-goog-api-key': h.secret },
        { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      ],
    } as const;
    for (const surface of FORMATS) {
      const [path, headers, body] = requests[surface];
      const res = await fetch(`${api.url}/api/gateway${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: `${JSON.stringify(body).slice(0, -1)},"deep":${deep}}`,
      });
      const text = await res.text();
      expect(res.status, `${surface} ${text.slice(0, 300)}`).toBe(400);
      expectShape(surface, JSON.parse(text));
    }
    expect(errorLogs()).toEqual([]);
  });
});
