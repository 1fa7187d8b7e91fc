/**
 * The Responses API (`POST /v1/responses`) through the official `openai`
 * SDK, to each provider type: what the caller gets back and what the
 * vendor receives (an OpenAI provider gets Chat Completions).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createVirtualKey } from '../../helpers/factories/config.js';
import { FORMATS, openaiClient, startHarness, type Harness } from './gateway-harness.js';
import { vendorView } from './responses-vendor-view.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const weather = {
  type: 'function' as const,
  name: 'weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
const TWO_CALLS = {
  reply: {
    tool_calls: [
      { name: 'weather', arguments: { city: 'Paris' } },
      { name: 'weather', arguments: { city: 'Rome' } },
    ],
  },
};
const result = (city: unknown) => JSON.stringify({ city, celsius: 21 });
const functionCalls = (output: OpenAI.Responses.ResponseOutputItem[]) =>
  output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');

describe.each(FORMATS)('to a %s provider', (provider) => {
  const model = () => `${h.providers[provider].name}/model-x`;
  const vendor = () => h.vendors[provider];
  const client = () => openaiClient(h.api, h.secret);

  it('text: instructions are the system prompt, limits and sampling reach the vendor, usage in the Responses shape', async () => {
    const res = await client().responses.create({
      model: model(),
      instructions: 'Be brief.',
      input: 'Say hello',
      max_output_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      metadata: { ticket: 'T-1' },
    });
    expect(res).toMatchObject({
      object: 'response',
      status: 'completed',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.3,
      metadata: { ticket: 'T-1' },
      store: true,
      usage: {
        input_tokens: 11,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 16,
      },
    });
    expect(res.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(res.output_text).toBe('Hello from the scripted vendor');
    expect(res.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed' }),
    ]);
    const got = vendor().received[0]!;
    expect(vendorView(provider, got)).toEqual({ system: 'Be brief.', turns: ['user: Say hello'] });
    const limits = {
      openai: { max_completion_tokens: 50, temperature: 0.3, top_p: 0.9 },
      anthropic: { max_tokens: 50, temperature: 0.3, top_p: 0.9 },
      gemini: { generationConfig: { maxOutputTokens: 50, temperature: 0.3, topP: 0.9 } },
    }[provider];
    expect(got.body).toMatchObject(limits);
    // Translated, never passed through: an OpenAI provider gets Chat Completions.
    if (provider === 'openai') expect(got.path).toBe('/v1/chat/completions');
    expect(JSON.stringify(got.body)).not.toContain('T-1');
  });

  it('tools: the calls come back as function_call items, and their outputs answer them', async () => {
    vendor().script(TWO_CALLS, { reply: { text: 'Paris 21, Rome 21' } });
    const first = await client().responses.create({
      model: model(),
      input: 'Weather in Paris and Rome?',
      tools: [weather],
      tool_choice: 'required',
    });
    const calls = functionCalls(first.output);
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ['weather', { city: 'Paris' }],
      ['weather', { city: 'Rome' }],
    ]);
    expect(calls.every((c) => c.call_id && c.id?.startsWith('fc_'))).toBe(true);
    const required = { openai: 'required', anthropic: { type: 'any' }, gemini: undefined }[provider];
    if (required) expect(vendor().received[0]!.body.tool_choice).toEqual(required);

    const second = await client().responses.create({
      model: model(),
      tools: [weather],
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        ...calls,
        ...calls.map((c) => ({
          type: 'function_call_output' as const,
          call_id: c.call_id,
          output: result((JSON.parse(c.arguments) as { city: string }).city),
        })),
      ],
    });
    expect(second.output_text).toBe('Paris 21, Rome 21');
    expect(vendorView(provider, vendor().received[1]!).turns).toEqual([
      'user: Weather in Paris and Rome?',
      'call weather {"city":"Paris"}',
      'call weather {"city":"Rome"}',
      `result: ${result('Paris')}`,
      `result: ${result('Rome')}`,
    ]);
  });

  it('previous_response_id continues the conversation: the vendor gets every earlier turn, not the old instructions', async () => {
    vendor().script({}, TWO_CALLS, { reply: { text: 'Paris 21, Rome 21' } });
    const r1 = await client().responses.create({
      model: model(),
      instructions: 'Be brief.',
      input: 'My name is Ada.',
    });
    const r2 = await client().responses.create({
      model: model(),
      previous_response_id: r1.id,
      input: 'Weather in Paris and Rome?',
      tools: [weather],
    });
    const r3 = await client().responses.create({
      model: model(),
      previous_response_id: r2.id,
      tools: [weather],
      input: functionCalls(r2.output).map((c) => ({
        type: 'function_call_output' as const,
        call_id: c.call_id,
        output: result((JSON.parse(c.arguments) as { city: string }).city),
      })),
    });
    expect(r3).toMatchObject({ previous_response_id: r2.id, output_text: 'Paris 21, Rome 21' });
    const third = vendorView(provider, vendor().received[2]!);
    // OpenAI's rule: a previous response's instructions are not carried over.
    expect(third.system).toBeUndefined();
    expect(third.turns).toEqual([
      'user: My name is Ada.',
      'assistant: Hello from the scripted vendor',
      'user: Weather in Paris and Rome?',
      'call weather {"city":"Paris"}',
      'call weather {"city":"Rome"}',
      `result: ${result('Paris')}`,
      `result: ${result('Rome')}`,
    ]);
  });

  it('text.format json_schema reaches the vendor as its structured output (Anthropic has none: a 400 naming it)', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const ask = () =>
      client().responses.create({
        model: model(),
        input: 'json please',
        text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
      });
    if (provider === 'anthropic') {
      const err = await ask().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain('text.format json_schema');
      expect(vendor().received).toHaveLength(0);
      return;
    }
    const res = await ask();
    expect(res.text?.format).toEqual({ type: 'json_schema', name: 'answer', schema, strict: true });
    expect(vendor().received[0]!.body).toMatchObject(
      provider === 'openai'
        ? { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } }
        : { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } },
    );
  });

  it('the usage row has the provider’s tokens, cached ones included, as the response reports them', async () => {
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: h.providers[provider].id, model_names: ['*'] }],
    });
    vendor().script({
      reply: { text: 'ok', usage: { input: 1300, output: 20, cacheRead: 1000, cacheWrite: 200 } },
    });
    const res = await openaiClient(h.api, key.secret_key).responses.create({ model: model(), input: 'hi' });
    // Gemini reports cache reads only.
    const written = provider === 'gemini' ? 0 : 200;
    expect(res.usage).toEqual({
      input_tokens: 1300,
      input_tokens_details: { cached_tokens: 1000, ...(written ? { cache_write_tokens: written } : {}) },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1320,
    });
    // Stored before the answer completed (provisional, or already complete); the outcome follows within completeMs.
    const usageRows = () =>
      h.api.server.deps
        .db('gateway_usage')
        .where({ virtual_key_id: key.id })
        .select('input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'status');
    expect(await usageRows()).toHaveLength(1);
    await h.api.server.deps.usage.flush();
    expect(await usageRows()).toEqual([
      {
        input_tokens: 1300,
        output_tokens: 20,
        cache_read_tokens: 1000,
        cache_write_tokens: written,
        status: 200,
      },
    ]);
  });
});

it('an answer comes with Server-Timing, and a bare key or a wrong one gets OpenAI’s 401', async () => {
  const url = `${h.api.url}/api/gateway/openai/v1/responses`;
  const body = JSON.stringify({ model: `${h.providers.gemini.name}/g`, input: 'hi' });
  const ok = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.secret}`, 'content-type': 'application/json' },
    body,
  });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+$/);
  const denied = await fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-vk-nope', 'content-type': 'application/json' },
    body,
  });
  expect(denied.status).toBe(401);
  expect(await denied.json()).toMatchObject({
    error: { type: 'invalid_request_error', code: 'invalid_api_key' },
  });
});
