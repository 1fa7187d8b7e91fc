/**
 * The translation matrix's caching cases, requests side: cache hints reach
 * the vendor that takes them, through the official SDKs. The scripted
 * vendors refuse what the real ones refuse (a breakpoint where Anthropic
 * allows none, more than four, `cache_control` sent to OpenAI, a field set
 * beside Gemini's cachedContent), so a wrong translation fails here.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  anthropicClient,
  FORMATS,
  geminiClient,
  openaiClient,
  startHarness,
  type Format,
  type Harness,
} from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const model = (provider: Format) => `${h.providers[provider].name}/claude-x`;
const eph = { type: 'ephemeral' as const };
const hour = { type: 'ephemeral' as const, ttl: '1h' as const };
const weather = { type: 'object' as const, properties: { city: { type: 'string' } } };

/** An Anthropic request with a breakpoint on a system block, a text block, a tool_result and a tool. */
const anthropicParams = (provider: Format): Anthropic.MessageCreateParamsNonStreaming => ({
  model: model(provider),
  max_tokens: 50,
  system: [
    { type: 'text', text: 'You answer questions about the attached handbook.', cache_control: hour },
    { type: 'text', text: 'Today is Monday.' },
  ],
  tools: [{ name: 'weather', description: 'Weather', input_schema: weather, cache_control: eph }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'The handbook: …', cache_control: eph }] },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '21 degrees', cache_control: eph },
        { type: 'text', text: 'And now?' },
      ],
    },
  ],
});

/** The same breakpoints as the OpenAI surface's extension: content parts, a message, a tool. */
const openaiParams = (provider: Format) =>
  ({
    model: model(provider),
    max_tokens: 50,
    messages: [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You answer questions about the attached handbook.', cache_control: hour },
          { type: 'text', text: 'Today is Monday.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'The handbook: …', cache_control: eph }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '21 degrees', cache_control: eph },
      { role: 'user', content: 'And now?' },
    ],
    tools: [
      {
        type: 'function',
        function: { name: 'weather', description: 'Weather', parameters: weather },
        cache_control: eph,
      },
    ],
  }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;

describe('cache_control reaches an Anthropic provider', () => {
  it('from the Anthropic surface: system, message blocks and tools exactly as sent', async () => {
    const params = anthropicParams('anthropic');
    await anthropicClient(h.api, h.secret).messages.create(params);
    const got = h.vendors.anthropic.received[0]!.body;
    expect(got.system).toEqual(params.system);
    expect(got.messages).toEqual(params.messages);
    expect(got.tools).toEqual(params.tools);
  });

  it('from the Anthropic surface, streaming, with the request-level cache_control', async () => {
    const params = { ...anthropicParams('anthropic'), cache_control: eph, stream: true as const };
    // Five breakpoints with the request-level one: one too many for Anthropic, so drop the tool's.
    params.tools = [{ name: 'weather', description: 'Weather', input_schema: weather }];
    const stream = anthropicClient(h.api, h.secret).messages.stream(params);
    await stream.finalMessage();
    const got = h.vendors.anthropic.received[0]!.body;
    expect(got.cache_control).toEqual(eph);
    expect(got.messages).toEqual(params.messages);
  });

  it('from the OpenAI surface extension: on the matching Anthropic blocks', async () => {
    await openaiClient(h.api, h.secret).chat.completions.create(openaiParams('anthropic'));
    const got = h.vendors.anthropic.received[0]!.body as {
      system: unknown;
      messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
      tools: unknown[];
    };
    expect(got.system).toEqual([
      { type: 'text', text: 'You answer questions about the attached handbook.', cache_control: hour },
      { type: 'text', text: 'Today is Monday.' },
    ]);
    expect(got.messages[0]!.content).toEqual([{ type: 'text', text: 'The handbook: …', cache_control: eph }]);
    expect(got.messages[2]!.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: '21 degrees',
      cache_control: eph,
    });
    expect(got.tools).toEqual([
      { name: 'weather', description: 'Weather', input_schema: weather, cache_control: eph },
    ]);
  });

  it("the vendor's refusal of a fifth breakpoint comes back as a 400, not a gateway failure", async () => {
    const params = openaiParams('anthropic') as unknown as { messages: Array<Record<string, unknown>> };
    params.messages[4] = { role: 'user', content: 'And now?', cache_control: eph };
    params.messages[2]!.cache_control = eph;
    const err = await openaiClient(h.api, h.secret)
      .chat.completions.create(params as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect(String((err as Error).message)).toContain(
      'A maximum of 4 blocks with cache_control may be provided. Found 6.',
    );
  });
});

describe('cache_control is left out for OpenAI and Gemini providers', () => {
  it.each(['openai', 'gemini'] as const)('from the OpenAI surface to a %s provider', async (provider) => {
    const res = await openaiClient(h.api, h.secret).chat.completions.create(openaiParams(provider));
    expect(res.choices[0]!.message.content).toBe('Hello from the scripted vendor');
    expect(JSON.stringify(h.vendors[provider].received[0]!.body)).not.toContain('cache_control');
  });

  it.each(['openai', 'gemini'] as const)('from the Anthropic surface to a %s provider', async (provider) => {
    const res = await anthropicClient(h.api, h.secret).messages.create({
      ...anthropicParams(provider),
      cache_control: eph,
    });
    expect(res.content).toEqual([{ type: 'text', text: 'Hello from the scripted vendor' }]);
    expect(JSON.stringify(h.vendors[provider].received[0]!.body)).not.toContain('cache_control');
  });
});

describe("Gemini's cachedContent", () => {
  it('passes through to a Gemini provider, JSON and streamed', async () => {
    const ai = geminiClient(h.api, h.secret);
    const name = 'cachedContents/handbook-123';
    await ai.models.generateContent({
      model: model('gemini'),
      contents: 'Summarise it',
      config: { cachedContent: name },
    });
    const stream = await ai.models.generateContentStream({
      model: model('gemini'),
      contents: 'Again',
      config: { cachedContent: name },
    });
    for await (const _ of stream);
    expect(h.vendors.gemini.received.map((r) => r.body.cachedContent)).toEqual([name, name]);
  });

  it.each(['openai', 'anthropic'] as const)(
    'is a 400 naming it towards a %s provider (never dropped)',
    async (provider) => {
      const res = await chatRequest(h.api, 'gemini', model(provider), {
        secret: h.secret,
        extra: { cachedContent: 'cachedContents/handbook-123' },
      });
      expect(res.status).toBe(400);
      expect(expectShape('gemini', await res.json())).toContain('cachedContent');
      expect(h.vendors[provider].received).toHaveLength(0);
    },
  );
});

describe('a malformed cache hint is a 400 in the surface’s own shape, naming the field', () => {
  const cases: Array<[Format, Record<string, unknown>, string]> = [
    [
      'openai',
      {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'persistent' } }] },
        ],
      },
      'messages[0].content[0].cache_control.type',
    ],
    [
      'anthropic',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1d' } }],
          },
        ],
      },
      'messages.0.content.0.cache_control.ttl',
    ],
    ['gemini', { cachedContent: 'handbook-123' }, 'cachedContent'],
  ];

  it.each(cases)('%s surface', async (surface, extra, field) => {
    for (const provider of FORMATS) {
      const res = await chatRequest(h.api, surface, model(provider), { secret: h.secret, extra });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { param?: unknown } };
      expect(expectShape(surface, body)).toContain(field);
      if (surface === 'openai') expect(body.error.param).toBe(field);
    }
    for (const f of FORMATS) expect(h.vendors[f].received).toHaveLength(0);
  });
});
