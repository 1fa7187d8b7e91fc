import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProvider, createVirtualKey } from '../../helpers/factories/config.js';
import {
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
  h = await startHarness({ MAX_BODY_BYTES: '65536' });
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const other = (f: Format): Format => (f === 'openai' ? 'anthropic' : f === 'anthropic' ? 'gemini' : 'openai');

describe.each(FORMATS)('%s surface', (surface) => {
  it("an upstream 400 reaches the caller in the caller's shape, the upstream message kept behind the provider name, not retried", async () => {
    const provider = other(surface);
    h.vendors[provider].script({ error: { status: 400, message: 'the vendor disliked this' } });
    const res = await chatRequest(h.api, surface, `${h.providers[provider].name}/m`, { secret: h.secret });
    expect(res.status).toBe(400);
    expect(expectShape(surface, await res.json())).toBe(
      `${h.providers[provider].name}: the vendor disliked this`,
    );
    expect(h.vendors[provider].received).toHaveLength(1);
  });

  it('a 500 then a success is retried and answered', async () => {
    h.vendors[surface].script({ error: { status: 500 } });
    const res = await chatRequest(h.api, surface, `${h.providers[surface].name}/m`, { secret: h.secret });
    expect(res.status).toBe(200);
    expect(h.vendors[surface].received).toHaveLength(2);
  });

  it('a 429 that persists is a 429 with Retry-After once the retries are spent', async () => {
    const busy = { error: { status: 429, message: 'slow down', retryAfter: '0' } };
    h.vendors[surface].script(busy, busy, busy);
    const res = await chatRequest(h.api, surface, `${h.providers[surface].name}/m`, { secret: h.secret });
    expect(res.status).toBe(429);
    expect(expectShape(surface, await res.json())).toContain('slow down');
    expect(res.headers.get('retry-after')).toBe('0');
    expect(h.vendors[surface].received).toHaveLength(3);
  });

  it("unknown gateway paths are 404s and bad bodies 400/413s (once the key is good), all in the surface's shape", async () => {
    const paths: Record<Format, string> = {
      openai: '/api/gateway/openai/v1/assistants',
      anthropic: '/api/gateway/anthropic/v1/complete',
      gemini: `/api/gateway/gemini/v1beta/models/x:countTokens`,
    };
    const notFound = await fetch(`${h.api.url}${paths[surface]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(notFound.status).toBe(404);
    expectShape(surface, await notFound.json());
    const target: Record<Format, string> = {
      openai: '/api/gateway/openai/v1/chat/completions',
      anthropic: '/api/gateway/anthropic/v1/messages',
      gemini: '/api/gateway/gemini/v1beta/models/m:generateContent',
    };
    const key: Record<Format, Record<string, string>> = {
      openai: { authorization: `Bearer ${h.secret}` },
      anthropic: { 'x-api-key': h.secret },
      gemini: { 'x-goog-api-key': h.secret },
    };
    // The body is read only once the virtual key is good: without one, a 401 whatever the body.
    for (const headers of [{}, key[surface]]) {
      const broken = await fetch(`${h.api.url}${target[surface]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"model": ',
      });
      expect(broken.status).toBe(headers === key[surface] ? 400 : 401);
      expectShape(surface, await broken.json());
      const huge = await fetch(`${h.api.url}${target[surface]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ pad: 'x'.repeat(70_000) }),
      });
      expect(huge.status).toBe(headers === key[surface] ? 413 : 401);
      expectShape(surface, await huge.json());
    }
  });
});

describe('fallbacks and timeouts', () => {
  it("a primary that keeps failing with 5xx falls back to the key's next provider/model", async () => {
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }],
      fallbacks: [`${h.providers.anthropic.name}/claude-fallback`],
    });
    const down = { error: { status: 503, message: 'overloaded' } };
    h.vendors.openai.script(down, down, down);
    const res = await openaiClient(h.api, key.secret_key).chat.completions.create({
      model: `${h.providers.openai.name}/gpt-x`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0]!.message.content).toBe('Hello from the scripted vendor');
    expect(h.vendors.openai.received).toHaveLength(3);
    expect(h.vendors.anthropic.received[0]!.body.model).toBe('claude-fallback');
  });

  it('a non-streaming answer may take longer than connect_timeout_ms', async () => {
    const provider = await createProvider(h.api, {
      provider_type: 'gemini',
      base_url: h.vendors.gemini.url,
      connect_timeout_ms: 100,
    });
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    h.vendors.gemini.script({ firstByteDelayMs: 400 });
    const res = await chatRequest(h.api, 'openai', `${provider.name}/m`, { secret: key.secret_key });
    expect(res.status).toBe(200);
  });

  it("a provider slower than its timeout_ms is a 504 in the caller's shape", async () => {
    const slow = await createProvider(h.api, {
      provider_type: 'openai',
      base_url: `${h.vendors.openai.url}/v1`,
      timeout_ms: 200,
    });
    const key = await createVirtualKey(h.api, { providers: [{ provider_id: slow.id, model_names: ['*'] }] });
    h.vendors.openai.script(
      { firstByteDelayMs: 1000 },
      { firstByteDelayMs: 1000 },
      { firstByteDelayMs: 1000 },
    );
    const res = await chatRequest(h.api, 'anthropic', `${slow.name}/m`, { secret: key.secret_key });
    expect(res.status).toBe(504);
    expect(expectShape('anthropic', await res.json())).toBe(`${slow.name}: timed out`);
  });
});

describe('same-format pass-through and features with no equivalent', () => {
  it('unknown fields and vendor tool types reach a provider of the same format untouched', async () => {
    const extras: Record<Format, Record<string, unknown>> = {
      openai: { seed: 7, logprobs: true, tools: [{ type: 'custom', custom: { name: 'grammar_tool' } }] },
      anthropic: { top_k: 5, tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] },
      gemini: {
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
        tools: [{ codeExecution: {} }],
      },
    };
    for (const f of FORMATS) {
      const res = await chatRequest(h.api, f, `${h.providers[f].name}/m`, {
        secret: h.secret,
        extra: extras[f],
      });
      expect(res.status).toBe(200);
      expect(h.vendors[f].received[0]!.body).toMatchObject(extras[f]);
    }
  });

  it('a feature the target format lacks is a 400 naming it, and nothing is sent', async () => {
    const cases: Array<[Format, Format, Record<string, unknown>, string]> = [
      ['openai', 'anthropic', { response_format: { type: 'json_object' } }, 'response_format'],
      ['openai', 'gemini', { logprobs: true }, 'logprobs'],
      ['anthropic', 'openai', { top_k: 5 }, 'top_k'],
      [
        'anthropic',
        'gemini',
        { tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] },
        'code_execution_20250522',
      ],
      ['gemini', 'openai', { safetySettings: [] }, 'safetySettings'],
      ['gemini', 'anthropic', { tools: [{ codeExecution: {} }] }, 'codeExecution'],
    ];
    for (const [surface, provider, extra, named] of cases) {
      const res = await chatRequest(h.api, surface, `${h.providers[provider].name}/m`, {
        secret: h.secret,
        extra,
      });
      expect(res.status).toBe(400);
      expect(expectShape(surface, await res.json())).toContain(named);
    }
    FORMATS.forEach((f) => expect(h.vendors[f].received).toHaveLength(0));
  });
});

describe('embeddings', () => {
  it('the OpenAI SDK embeds through an OpenAI provider and a Gemini one', async () => {
    const client = openaiClient(h.api, h.secret);
    const direct = await client.embeddings.create({
      model: `${h.providers.openai.name}/emb`,
      input: ['a', 'b'],
    });
    expect(direct.data.map((d) => d.embedding)).toEqual([
      [0, 0.5, -0.5],
      [1, 0.5, -0.5],
    ]);
    const translated = await client.embeddings.create({
      model: `${h.providers.gemini.name}/text-embedding-004`,
      input: ['a', 'b'],
    });
    expect(translated.data.map((d) => d.embedding)).toEqual([
      [0, 0.25, -0.25],
      [1, 0.25, -0.25],
    ]);
    expect(h.vendors.gemini.received[0]!.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
  });

  it('the Gemini SDK embeds through a Gemini provider and an OpenAI one; Anthropic has none', async () => {
    const ai = geminiClient(h.api, h.secret);
    const direct = await ai.models.embedContent({
      model: `${h.providers.gemini.name}/emb`,
      contents: 'hello',
    });
    expect(direct.embeddings?.[0]?.values).toEqual([0, 0.25, -0.25]);
    const translated = await ai.models.embedContent({
      model: `${h.providers.openai.name}/emb`,
      contents: 'hello',
    });
    expect(translated.embeddings?.[0]?.values).toEqual([0, 0.5, -0.5]);
    await expect(
      ai.models.embedContent({ model: `${h.providers.anthropic.name}/emb`, contents: 'hello' }),
    ).rejects.toThrow(/embeddings has no equivalent on anthropic/);
  });
});
