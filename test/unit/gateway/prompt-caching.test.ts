/**
 * Prompt caching on the gateway's surfaces, below HTTP: the OpenAI
 * surface's cache_control extension (parsed, validated, stripped for an
 * OpenAI provider), each surface's cached usage shape, and the price of
 * cached tokens.
 */
import { describe, expect, it } from 'vitest';
import { costUsd, worstCaseCostUsd, type Price } from '../../../core/metering/pricing.js';
import type { LlmResponse, Usage } from '../../../core/llm/types.js';
import { GatewayError } from '../../../api/gateway/errors.js';
import { anthropicSurface } from '../../../api/gateway/surfaces/anthropic/index.js';
import { geminiSurface } from '../../../api/gateway/surfaces/gemini/index.js';
import { openaiSurface } from '../../../api/gateway/surfaces/openai/index.js';

const eph = { type: 'ephemeral' };

describe('the OpenAI surface cache_control extension', () => {
  const body = {
    model: 'm',
    messages: [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'rules', cache_control: eph },
          { type: 'text', text: 'x' },
        ],
      },
      { role: 'user', content: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        cache_control: eph,
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'r', cache_control: eph }] },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: {} }, cache_control: eph }],
  };

  it('puts each breakpoint on the matching internal block (message-level: the last block)', () => {
    const req = openaiSurface.parseRequest(body, 'm', 'anthropic');
    expect(req.system).toBe('rulesx');
    expect(req.system_blocks).toEqual([
      { type: 'text', text: 'rules', cache_control: eph },
      { type: 'text', text: 'x' },
    ]);
    expect(req.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    });
    expect(req.messages[1]).toMatchObject({ tool_calls: [{ id: 'c1', cache_control: eph }] });
    expect(req.messages[2]).toMatchObject({ role: 'tool', cache_control: eph });
    expect(req.tools![0]).toMatchObject({ name: 'f', cache_control: eph });
  });

  it('is stripped for an OpenAI provider, and a body without any is passed as it is', () => {
    const stripped = openaiSurface.sameFormatChatBody!(body);
    expect(JSON.stringify(stripped)).not.toContain('cache_control');
    expect(JSON.stringify(body)).toContain('cache_control');
    const plain = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(openaiSurface.sameFormatChatBody!(plain)).toBe(plain);
  });

  it('refuses a malformed value with a 400 whose param names the field', () => {
    const bad = {
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] },
      ],
    };
    const err = catchError(() => openaiSurface.validateChat!(bad));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[0].cache_control.type');
    expect(openaiSurface.errorBody(err)).toMatchObject({
      error: { param: 'messages[0].content[0].cache_control.type', type: 'invalid_request_error' },
    });
    expect(catchError(() => openaiSurface.validateChat!({ tools: [{ cache_control: 'yes' }] })).param).toBe(
      'tools[0].cache_control',
    );
  });
});

describe('the Anthropic and Gemini surfaces refuse malformed cache fields', () => {
  it('Anthropic names the block path, tool_result content included', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [{ type: 'text', text: 'r', cache_control: { type: 'ephemeral', ttl: '2h' } }],
            },
          ],
        },
      ],
    };
    const err = catchError(() => anthropicSurface.validateChat!(body));
    expect(err.message).toBe("messages.0.content.0.content.0.cache_control.ttl: must be '5m' or '1h'");
    expect(
      catchError(() =>
        anthropicSurface.validateChat!({ system: [{ type: 'text', text: 's', cache_control: {} }] }),
      ).message,
    ).toMatch(/^system\.0\.cache_control\.type:/);
    expect(() => anthropicSurface.validateChat!({ cache_control: null, messages: [] })).not.toThrow();
  });

  it('Gemini names cachedContent', () => {
    expect(catchError(() => geminiSurface.validateChat!({ cachedContent: 42 })).message).toMatch(
      /'cachedContent'/,
    );
    expect(() => geminiSurface.validateChat!({ cachedContent: 'cachedContents/abc' })).not.toThrow();
  });
});

describe('each surface reports cached tokens in its own usage shape', () => {
  const usage: Usage = {
    input_tokens: 1300,
    output_tokens: 20,
    cache_read_tokens: 1000,
    cache_write_tokens: 200,
  };
  const res: LlmResponse = { id: 'r', model: 'm', text: 'hi', tool_calls: [], finish_reason: 'stop', usage };

  it('OpenAI: prompt_tokens is all input; cached_tokens and cache_write_tokens in prompt_tokens_details', () => {
    expect((openaiSurface.renderResponse(res) as { usage: unknown }).usage).toEqual({
      prompt_tokens: 1300,
      completion_tokens: 20,
      total_tokens: 1320,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
    });
  });

  it('Anthropic: input_tokens is the uncached rest', () => {
    expect((anthropicSurface.renderResponse(res) as { usage: unknown }).usage).toEqual({
      input_tokens: 100,
      output_tokens: 20,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 200,
    });
  });

  it('Gemini: promptTokenCount is all input, cachedContentTokenCount the reads', () => {
    expect((geminiSurface.renderResponse(res) as { usageMetadata: unknown }).usageMetadata).toEqual({
      promptTokenCount: 1300,
      candidatesTokenCount: 20,
      totalTokenCount: 1320,
      cachedContentTokenCount: 1000,
    });
  });

  it('streams carry the same shapes', () => {
    const openai = openaiSurface.createStreamRenderer({ stream_options: { include_usage: true } });
    expect(openai.event({ type: 'usage', usage })).toContain('"prompt_tokens_details":{"cached_tokens":1000');
    const anthropic = anthropicSurface.createStreamRenderer({});
    anthropic.event({ type: 'usage', usage });
    expect(anthropic.end()).toContain(
      '"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000',
    );
    const gemini = geminiSurface.createStreamRenderer({});
    gemini.event({ type: 'usage', usage });
    expect(gemini.end()).toContain('"cachedContentTokenCount":1000');
  });
});

describe('the price of cached tokens', () => {
  const price: Price = {
    input_per_million_usd: 3,
    output_per_million_usd: 15,
    cache_read_per_million_usd: 0.3,
    cache_write_per_million_usd: 3.75,
  };
  const usage: Usage = {
    input_tokens: 1_300_000,
    output_tokens: 1_000_000,
    cache_read_tokens: 1_000_000,
    cache_write_tokens: 200_000,
  };

  it('uncached input, reads, writes and output each at their own rate', () => {
    expect(costUsd(price, usage)).toBeCloseTo(0.1 * 3 + 1 * 0.3 + 0.2 * 3.75 + 15, 10);
  });

  it('without cache rates, cached tokens cost the input price', () => {
    const plain = { input_per_million_usd: 3, output_per_million_usd: 15 };
    expect(costUsd(plain, usage)).toBeCloseTo(1.3 * 3 + 15, 10);
  });

  it('a reservation prices input at the dearer of the input and cache-write rates', () => {
    expect(worstCaseCostUsd(price, 1_000_000, 0)).toBeCloseTo(3.75, 10);
    expect(worstCaseCostUsd({ ...price, cache_write_per_million_usd: undefined }, 1_000_000, 0)).toBeCloseTo(
      3,
      10,
    );
  });
});

function catchError(fn: () => void): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}
