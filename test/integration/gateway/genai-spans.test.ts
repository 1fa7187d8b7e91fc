/**
 * Every gateway call is a GenAI CLIENT span in the caller's trace, under the
 * HTTP server span, with the model, token usage and cost — which is what
 * /traces/stats/models sums.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../../helpers/factories.js';
import { createModel } from '../../helpers/factories/config.js';
import { startHarness, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

interface SpanRow {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  status_code?: string;
  attributes: Record<string, unknown>;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const project = await createProject(h.api);
  await createModel(h.api, project.id, {
    provider_type: 'anthropic',
    provider_id: h.providers.anthropic.id,
    model_id: 'm',
    pricing: { input_per_million_usd: 10, output_per_million_usd: 10 },
  });
});
afterAll(() => h.close());

async function spansOf(traceId: string, until: (spans: SpanRow[]) => boolean): Promise<SpanRow[]> {
  const deadline = Date.now() + 10_000; // spans are exported in batches
  for (;;) {
    const res = await h.api.request<{ spans: SpanRow[] }>('GET', `/api/agent-server/traces/${traceId}`);
    const spans = res.status === 200 ? res.body.data.spans : [];
    if (until(spans) || Date.now() > deadline) return spans;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('gateway model-call spans', () => {
  it('an OpenAI-surface call to the Anthropic provider is one GenAI span under the request span', async () => {
    const res = await chatRequest(h.api, 'openai', `${h.providers.anthropic.name}/m`, { secret: h.secret });
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await spansOf(traceId, (s) => s.some((x) => x.attributes['gen_ai.request.model'] === 'm'));
    const server = spans.find((s) => s.name === 'POST /api/gateway/openai/v1/chat/completions');
    const genai = spans.filter((s) => s.attributes['gen_ai.request.model'] === 'm');
    expect(server).toBeDefined();
    expect(genai).toHaveLength(1);
    expect(genai[0]).toMatchObject({ kind: 'CLIENT', parent_span_id: server!.span_id });
    expect(genai[0]!.attributes).toMatchObject({
      'gen_ai.system': 'anthropic',
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 5,
    });
    expect(genai[0]!.attributes['gen_ai.usage.cost_usd']).toBeCloseTo((16 * 10) / 1e6, 12);
    // Prompt text is not recorded unless OTEL_RECORD_CONTENT=true.
    expect(JSON.stringify(genai[0]!.attributes)).not.toContain('"hi"');
  });

  it('the vendor call is that one CLIENT span: it is the traceparent the vendor receives, and no HTTP client span is added', async () => {
    h.vendors.anthropic.reset();
    const res = await chatRequest(h.api, 'openai', `${h.providers.anthropic.name}/m`, { secret: h.secret });
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id')!;
    const spans = await spansOf(traceId, (s) => s.some((x) => x.attributes['gen_ai.request.model'] === 'm'));
    const genai = spans.find((s) => s.attributes['gen_ai.request.model'] === 'm')!;
    // Database queries are CLIENT spans too; the outgoing HTTP ones are what would double-count a call.
    const http = spans.filter(
      (s) => s.kind === 'CLIENT' && !Object.keys(s.attributes).some((k) => k.startsWith('db.')),
    );
    expect(http).toEqual([genai]);
    const received = h.vendors.anthropic.received;
    expect(received).toHaveLength(1);
    expect(received[0]!.headers.traceparent).toBe(`00-${traceId}-${genai.span_id}-01`);
  });

  it('a failed upstream call is an error span with the status as error.type', async () => {
    // Retries and no fallback: every attempt fails.
    h.vendors.gemini.script(
      ...Array.from({ length: 5 }, () => ({ error: { status: 500, message: 'boom' } })),
    );
    const res = await chatRequest(h.api, 'gemini', `${h.providers.gemini.name}/m`, { secret: h.secret });
    expect(res.status).toBeGreaterThanOrEqual(500);
    h.vendors.gemini.reset();
    const traceId = res.headers.get('x-trace-id')!;
    const spans = await spansOf(traceId, (s) => s.some((x) => x.attributes['gen_ai.request.model'] === 'm'));
    const genai = spans.find((s) => s.attributes['gen_ai.request.model'] === 'm');
    expect(genai?.attributes['error.type']).toBe(String(res.status));
  });
});
