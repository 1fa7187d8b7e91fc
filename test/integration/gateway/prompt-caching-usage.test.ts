/**
 * The translation matrix's caching cases, usage side: cached tokens reported
 * in every surface's own usage shape whichever provider answered, JSON and
 * streamed, through the official SDKs; and priced at the cache rates in the
 * usage log, the budget and the metrics.
 */
import type { GenerateContentResponseUsageMetadata } from '@google/genai';
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProject } from '../../helpers/factories.js';
import { createModel, createVirtualKey, VIRTUAL_KEYS } from '../../helpers/factories/config.js';
import { parsePrometheusText, sumOf } from '../../helpers/prometheus-text.js';
import {
  anthropicClient,
  FORMATS,
  geminiClient,
  openaiClient,
  startHarness,
  type Format,
  type Harness,
} from './gateway-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

/** 1300 prompt tokens, of which 1000 read from the cache and 200 written to it. */
const CACHED = {
  reply: { text: 'cached answer', usage: { input: 1300, output: 20, cacheRead: 1000, cacheWrite: 200 } },
};
/** Gemini reports cache reads only: its writes are a separate API call, so they stay plain input. */
const written = (provider: Format) => (provider === 'gemini' ? 0 : 200);

/** What each surface's SDK shows: every input token, the reads, the writes, the output. */
interface Seen {
  input: number;
  read: number;
  write: number;
  output: number;
}

async function openaiCall(secret: string, model: string, stream: boolean): Promise<Seen> {
  const client = openaiClient(h.api, secret);
  const messages = [{ role: 'user' as const, content: 'hi' }];
  let usage: OpenAI.CompletionUsage | undefined;
  if (stream) {
    const chunks = await client.chat.completions.create({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const c of chunks) usage = c.usage ?? usage;
  } else usage = (await client.chat.completions.create({ model, messages })).usage;
  if (!usage) throw new Error('no usage in the answer');
  return {
    input: usage.prompt_tokens,
    read: usage.prompt_tokens_details?.cached_tokens ?? 0,
    write: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    output: usage.completion_tokens,
  };
}

async function anthropicCall(secret: string, model: string, stream: boolean): Promise<Seen> {
  const client = anthropicClient(h.api, secret);
  const params = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }] };
  const { usage } = stream
    ? await client.messages.stream(params).finalMessage()
    : await client.messages.create(params);
  const read = usage.cache_read_input_tokens ?? 0;
  const write = usage.cache_creation_input_tokens ?? 0;
  // Anthropic's input_tokens is the uncached rest.
  return { input: usage.input_tokens + read + write, read, write, output: usage.output_tokens };
}

async function geminiCall(secret: string, model: string, stream: boolean): Promise<Seen> {
  const ai = geminiClient(h.api, secret);
  let meta: GenerateContentResponseUsageMetadata | undefined;
  if (stream) {
    for await (const c of await ai.models.generateContentStream({ model, contents: 'hi' }))
      meta = c.usageMetadata ?? meta;
  } else meta = (await ai.models.generateContent({ model, contents: 'hi' })).usageMetadata;
  // Gemini has no count of cache writes: they are part of promptTokenCount.
  if (!meta) throw new Error('no usageMetadata in the answer');
  return {
    input: meta.promptTokenCount ?? 0,
    read: meta.cachedContentTokenCount ?? 0,
    write: -1,
    output: meta.candidatesTokenCount ?? 0,
  };
}

const CALLS: Record<Format, (secret: string, model: string, stream: boolean) => Promise<Seen>> = {
  openai: openaiCall,
  anthropic: anthropicCall,
  gemini: geminiCall,
};

describe.each(FORMATS)('%s surface reports cached tokens', (surface) => {
  describe.each(FORMATS)('from a %s provider', (provider) => {
    it.each([false, true])('stream: %s', async (stream) => {
      h.vendors[provider].script(CACHED);
      const seen = await CALLS[surface](h.secret, `${h.providers[provider].name}/m`, stream);
      expect(seen).toEqual({
        input: 1300,
        read: 1000,
        // The Gemini surface has no field for writes (-1: not shown).
        write: surface === 'gemini' ? -1 : written(provider),
        output: 20,
      });
    });
  });
});

describe('cached tokens are charged at the cache rates', () => {
  /** USD per million: input 10, output 20, cache reads 1, cache writes 12.5. */
  const pricing = {
    input_per_million_usd: 10,
    output_per_million_usd: 20,
    cache_read_per_million_usd: 1,
    cache_write_per_million_usd: 12.5,
  };
  beforeAll(async () => {
    const project = await createProject(h.api);
    for (const f of FORMATS)
      await createModel(h.api, project.id, {
        provider_type: f,
        provider_id: h.providers[f].id,
        model_id: 'priced',
        pricing,
        // The budgeted key's calls below set no output limit: this bounds their reservation.
        max_output_tokens: 1_000,
      });
  });

  it('a Model takes cache rates (optional) and refuses a negative one, naming it', async () => {
    const project = await createProject(h.api);
    const model = await createModel(h.api, project.id, { pricing });
    expect(model.pricing).toEqual(pricing);
    const bad = await h.api.request('POST', `/api/agent-server/models?project_id=${project.id}`, {
      name: 'bad-cache-rate',
      model_id: 'm',
      provider_type: 'openai',
      pricing: { ...pricing, cache_write_per_million_usd: -1 },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('pricing.cache_write_per_million_usd');
  });

  const cost = (provider: Format) => {
    const write = written(provider);
    return ((1300 - 1000 - write) * 10 + 1000 * 1 + write * 12.5 + 20 * 20) / 1e6;
  };

  it.each(FORMATS)('%s provider: usage rows, totals, series, budget and metrics', async (provider) => {
    const key = await createVirtualKey(h.api, {
      providers: FORMATS.map((f) => ({ provider_id: h.providers[f].id, model_names: ['*'] })),
      budget: { max_usd: 5, period: 'day' },
    });
    const metricsBefore = parsePrometheusText(await (await fetch(`${h.api.url}/metrics`)).text());
    const model = `${h.providers[provider].name}/priced`;
    // One JSON call on the provider's own surface (passed through), one streamed and translated.
    h.vendors[provider].script(CACHED, CACHED);
    const other: Format = provider === 'anthropic' ? 'openai' : 'anthropic';
    await CALLS[provider](key.secret_key, model, false);
    await CALLS[other](key.secret_key, model, true);

    const usage = await h.api.request<{
      totals: Record<string, number>;
      models: Array<Record<string, number | string>>;
    }>('GET', `${VIRTUAL_KEYS}/${key.id}/usage`);
    expect(usage.body.data.totals).toMatchObject({
      requests: 2,
      input_tokens: 2600,
      output_tokens: 40,
      cache_read_tokens: 2000,
      cache_write_tokens: 2 * written(provider),
    });
    expect(usage.body.data.totals.cost_usd).toBeCloseTo(2 * cost(provider), 10);
    expect(usage.body.data.models[0]).toMatchObject({ cache_read_tokens: 2000 });

    // The budget's ledger is written after the answers have gone: wait for both settles.
    let series: { totals: Record<string, number>; budget: { spent_usd: number } } | undefined;
    for (let i = 0; i < 50; i++) {
      series = (await h.api.request<typeof series>('GET', `${VIRTUAL_KEYS}/${key.id}/usage/series`)).body
        .data;
      if (series!.budget.spent_usd >= 2 * cost(provider) - 1e-9) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(series!.budget.spent_usd).toBeCloseTo(2 * cost(provider), 8);
    expect(series!.totals).toMatchObject({
      cache_read_tokens: 2000,
      cache_write_tokens: 2 * written(provider),
    });

    const metricsAfter = parsePrometheusText(await (await fetch(`${h.api.url}/metrics`)).text());
    const rose = (labels: Record<string, string>) =>
      sumOf(metricsAfter, 'agent_server_gateway_cache_tokens_total', labels) -
      sumOf(metricsBefore, 'agent_server_gateway_cache_tokens_total', labels);
    expect(rose({ gen_ai_provider_name: provider, gen_ai_token_cache: 'read' })).toBe(2000);
    expect(rose({ gen_ai_provider_name: provider, gen_ai_token_cache: 'creation' })).toBe(
      2 * written(provider),
    );
  });
});
