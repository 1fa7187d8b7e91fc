/**
 * GET /metrics on the API: the Prometheus text format (read by a strict
 * parser), exact counts after real requests through the API and the gateway
 * (official SDKs against the scripted vendors), bounded label values, and
 * the token that guards it (METRICS_TOKEN, else ADMIN_TOKEN).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import { allSamples, parsePrometheusText, sumOf, type Family } from '../helpers/prometheus-text.js';
import {
  anthropicClient,
  geminiClient,
  openaiClient,
  startHarness,
  type Harness,
} from './gateway/gateway-harness.js';
import { chatRequest } from './gateway/raw-requests.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const OPENAI_ROUTE = '/api/gateway/openai/v1/chat/completions';
const ANTHROPIC_ROUTE = '/api/gateway/anthropic/v1/messages';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function scrape(api: TestApi = h.api, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}/metrics`, { headers });
  const text = await res.text();
  return { res, text, families: res.status === 200 ? parsePrometheusText(text) : new Map<string, Family>() };
}

/** `after - before` of the samples named `name` whose labels include `match`. */
const rose = (
  before: Map<string, Family>,
  after: Map<string, Family>,
  name: string,
  match: Record<string, string | undefined> = {},
) => sumOf(after, name, match) - sumOf(before, name, match);

describe('GET /metrics', () => {
  it('is the Prometheus text format: it parses strictly and every family has HELP and TYPE', async () => {
    await openaiClient(h.api, h.secret).chat.completions.create({
      model: `${h.providers.openai.name}/gpt-4o-mini`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { res, text, families } = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    // A scrape is not an API request: no span, so no trace id.
    expect(res.headers.get('x-trace-id')).toBeNull();
    expect(families.size).toBeGreaterThan(10);
    for (const f of families.values()) {
      expect(f.help, `HELP of ${f.name}`).toBeTruthy();
      expect(f.type, `TYPE of ${f.name}`).toBeDefined();
    }
    const names = [...families.keys()];
    expect(names).toEqual(
      expect.arrayContaining([
        'http_server_request_duration_seconds',
        'agent_server_gateway_requests_total',
        'agent_server_gateway_cost_usd_total',
        'agent_server_gateway_overhead_duration_seconds',
        'gen_ai_client_operation_duration_seconds',
        'gen_ai_client_token_usage',
        'db_client_connection_count',
        'db_client_connection_pending_requests',
        'nodejs_eventloop_delay_p99_seconds',
        'otel_sdk_processor_span_queue_size',
        'otel_sdk_processor_span_processed_total',
      ]),
    );
    expect(families.get('agent_server_gateway_requests_total')!.type).toBe('counter');
    expect(families.get('http_server_request_duration_seconds')!.type).toBe('histogram');
    expect(families.get('db_client_connection_count')!.type).toBe('gauge');
    // The API's own pool and the span exporter's are told apart.
    const pools = new Set(
      families.get('db_client_connection_count')!.samples.map((s) => s.labels.db_client_connection_pool_name),
    );
    expect([...pools].sort()).toEqual(['main', 'telemetry']);
    expect(text).not.toContain(h.secret);
  });

  it('has bounded label values: route templates, no ids, no secrets, no caller text', async () => {
    // Caller text in the path, the model and the key: none of it may become a label.
    await h.api.request('GET', `/api/agent-server/projects/${randomUUID()}`);
    await h.api.request('GET', `/nothing/here/${randomUUID()}`);
    await chatRequest(h.api, 'openai', `caller-text-${randomUUID()}`, { secret: h.secret });
    await chatRequest(h.api, 'openai', 'gpt-4o-mini', { secret: `sk-guess-${randomUUID()}` });
    const { text, families } = await scrape();
    expect(text).not.toMatch(UUID);
    expect(text).not.toContain('caller-text');
    expect(text).not.toContain('sk-guess');
    expect(text).not.toContain(h.secret);
    for (const s of allSamples(families))
      for (const [label, value] of Object.entries(s.labels)) {
        if (label === 'http_route') expect(value).toMatch(/^\/api\/[A-Za-z0-9/_{}*.:-]+$/);
        else expect(value, `${s.name} ${label}`).not.toContain('/');
        expect(value.length, `${s.name} ${label}`).toBeLessThanOrEqual(100);
      }
  });
});

describe('counts after real requests', () => {
  it('gateway: 8 requests through the official SDKs, 3 failing → requests +8, errors +3 by status', async () => {
    const before = (await scrape()).families;
    const openai = openaiClient(h.api, h.secret);
    const chat = (model: string) =>
      openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await chat(`${h.providers.openai.name}/gpt-4o-mini`);
    await chat(`${h.providers.openai.name}/gpt-4o-mini`);
    const anthropic = anthropicClient(h.api, h.secret);
    await anthropic.messages.create({
      model: `${h.providers.anthropic.name}/claude-3-5-haiku`,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const stream = await anthropic.messages.create({
      model: `${h.providers.anthropic.name}/claude-3-5-haiku`,
      max_tokens: 50,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    for await (const _ of stream) {
      // drained
    }
    await geminiClient(h.api, h.secret).models.generateContent({
      model: `${h.providers.gemini.name}/gemini-2.0-flash`,
      contents: 'hi',
    });
    // Failing: a bad key (401), the vendor's own 400, an ambiguous model (400, before upstream).
    await expect(
      openaiClient(h.api, 'sk-not-a-key').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ).rejects.toMatchObject({ status: 401 });
    h.vendors.openai.script({ error: { status: 400, message: 'no such model' } });
    await expect(chat(`${h.providers.openai.name}/never-answered`)).rejects.toMatchObject({ status: 400 });
    await expect(chat('shared-name')).rejects.toMatchObject({ status: 400 });
    const after = (await scrape()).families;

    expect(rose(before, after, 'agent_server_gateway_requests_total')).toBe(8);
    expect(rose(before, after, 'agent_server_gateway_errors_total')).toBe(3);
    expect(rose(before, after, 'agent_server_gateway_errors_total', { error_type: '401' })).toBe(1);
    expect(rose(before, after, 'agent_server_gateway_errors_total', { error_type: '400' })).toBe(2);
    expect(
      rose(before, after, 'agent_server_gateway_requests_total', {
        agent_server_gateway_surface: 'anthropic',
        gen_ai_provider_name: 'anthropic',
        agent_server_provider_name: h.providers.anthropic.name,
        gen_ai_request_model: 'claude-3-5-haiku',
      }),
    ).toBe(2);
    // A model no upstream has answered for, under a wildcard grant, is not a label.
    expect(
      rose(before, after, 'agent_server_gateway_errors_total', {
        gen_ai_request_model: '_OTHER',
        error_type: '400',
      }),
    ).toBe(1);

    // Upstream time and the gateway's own time: only for the 6 requests that went upstream.
    expect(rose(before, after, 'gen_ai_client_operation_duration_seconds_count')).toBe(6);
    expect(rose(before, after, 'gen_ai_client_operation_duration_seconds_count', { error_type: '400' })).toBe(
      1,
    );
    expect(rose(before, after, 'agent_server_gateway_overhead_duration_seconds_count')).toBe(6);
    // Every scripted answer reports 11 input and 5 output tokens.
    expect(rose(before, after, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'input' })).toBe(5);
    expect(rose(before, after, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input' })).toBe(55);
    expect(rose(before, after, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output' })).toBe(25);
    // gpt-4o-mini's list price: $0.15 / $0.60 per million tokens.
    expect(
      rose(before, after, 'agent_server_gateway_cost_usd_total', { gen_ai_request_model: 'gpt-4o-mini' }),
    ).toBeCloseTo((2 * (11 * 0.15 + 5 * 0.6)) / 1e6, 12);

    // The HTTP server's view of the same requests, by route template.
    const count = 'http_server_request_duration_seconds_count';
    expect(rose(before, after, count, { http_route: OPENAI_ROUTE, http_request_method: 'POST' })).toBe(5);
    expect(rose(before, after, count, { http_route: OPENAI_ROUTE, http_response_status_code: '401' })).toBe(
      1,
    );
    expect(rose(before, after, count, { http_route: ANTHROPIC_ROUTE })).toBe(2);
    const gemini = [...after.values()]
      .flatMap((f) => f.samples)
      .filter((s) => s.name === count && s.labels.http_route?.startsWith('/api/gateway/gemini/'));
    // The router's own template (as on the span): bounded, whatever the model in the path.
    expect(gemini.map((s) => s.labels.http_route)).toEqual(['/api/gateway/gemini/v1beta/models/*rest']);
  });

  it('API: each request once under its route template, unmatched ones without a route, scrapes not at all', async () => {
    const project = await createProject(h.api);
    const before = (await scrape()).families;
    expect((await h.api.request('GET', `/api/agent-server/projects/${project.id}`)).status).toBe(200);
    expect((await h.api.request('GET', `/api/agent-server/projects/${randomUUID()}`)).status).toBe(404);
    expect((await h.api.request('GET', '/no/such/path')).status).toBe(404);
    await scrape();
    await scrape();
    const after = (await scrape()).families;
    const count = 'http_server_request_duration_seconds_count';
    expect(rose(before, after, count)).toBe(3);
    const route = '/api/agent-server/projects/{id}';
    expect(rose(before, after, count, { http_route: route, http_response_status_code: '200' })).toBe(1);
    expect(rose(before, after, count, { http_route: route, http_response_status_code: '404' })).toBe(1);
    expect(
      rose(before, after, count, {
        http_route: undefined,
        http_request_method: 'GET',
        http_response_status_code: '404',
      }),
    ).toBe(1);
    expect(allSamples(after).some((s) => s.labels.http_route?.includes('metrics'))).toBe(false);
  });
});

describe('the /metrics token', () => {
  const token = `admin-${randomUUID()}`;
  const metricsToken = `metrics-${randomUUID()}`;

  it('with METRICS_REQUIRE_TOKEN: 401 without ADMIN_TOKEN, and the metrics with it', async () => {
    const guarded = await startTestApi({ ADMIN_TOKEN: token, METRICS_REQUIRE_TOKEN: 'true' });
    try {
      const none = await scrape(guarded);
      expect(none.res.status).toBe(401);
      expect(none.res.headers.get('www-authenticate')).toBe('Bearer');
      expect(none.text).not.toContain('# TYPE');
      expect((await scrape(guarded, { authorization: 'Bearer wrong-token-0123456789' })).res.status).toBe(
        401,
      );
      const ok = await scrape(guarded, { authorization: `Bearer ${token}` });
      expect(ok.res.status).toBe(200);
      expect(ok.families.has('http_server_request_duration_seconds')).toBe(true);
    } finally {
      await guarded.close();
    }
  });

  it('ADMIN_TOKEN alone guards it too: nobody without the token reads the metrics', async () => {
    const api = await startTestApi({ ADMIN_TOKEN: token });
    try {
      const none = await scrape(api);
      expect(none.res.status).toBe(401);
      expect(none.text).not.toContain('# TYPE');
      expect((await scrape(api, { authorization: `Bearer ${token}` })).res.status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('METRICS_TOKEN, when set, is the one token it takes (Prometheus never holds the admin token)', async () => {
    const api = await startTestApi({ ADMIN_TOKEN: token, METRICS_TOKEN: metricsToken });
    try {
      expect((await scrape(api)).res.status).toBe(401);
      expect((await scrape(api, { authorization: `Bearer ${token}` })).res.status).toBe(401);
      const ok = await scrape(api, { authorization: `Bearer ${metricsToken}` });
      expect(ok.res.status).toBe(200);
      expect(ok.families.size).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
  });

  it('METRICS_TOKEN guards it without ADMIN_TOKEN; with neither it is open (loopback development)', async () => {
    const api = await startTestApi({ METRICS_TOKEN: metricsToken });
    try {
      expect((await scrape(api)).res.status).toBe(401);
      expect((await scrape(api, { authorization: `Bearer ${metricsToken}` })).res.status).toBe(200);
      // The configuration API stays open: METRICS_TOKEN is not an admin token.
      expect((await api.request('GET', '/api/agent-server/projects')).status).toBe(200);
    } finally {
      await api.close();
    }
    expect((await scrape()).res.status).toBe(200);
  });
});
