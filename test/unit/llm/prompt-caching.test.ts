/**
 * Prompt caching in the adapter library: cached-token usage read from each
 * vendor's answers (input counts every prompt token, the cache counts are
 * subsets of it), and cache breakpoints placed on the Anthropic request.
 */
import { describe, expect, it } from 'vitest';
import { cacheControlProblem, toCacheControl } from '../../../core/llm/cache-control.js';
import { toAnthropicRequest } from '../../../core/llm/providers/anthropic/request.js';
import {
  createAnthropicStreamParser,
  fromAnthropicResponse,
} from '../../../core/llm/providers/anthropic/response.js';
import { toGeminiRequest } from '../../../core/llm/providers/gemini/request.js';
import { createGeminiStreamParser, fromGeminiResponse } from '../../../core/llm/providers/gemini/response.js';
import { toOpenAiRequest } from '../../../core/llm/providers/openai/request.js';
import { createOpenAiStreamParser, fromOpenAiResponse } from '../../../core/llm/providers/openai/response.js';
import type { LlmRequest, LlmStreamEvent } from '../../../core/llm/types.js';

const usageOf = (events: LlmStreamEvent[]) => events.find((e) => e.type === 'usage');
const sse = (data: unknown) => ({ data: JSON.stringify(data) });

describe('cached usage from each vendor', () => {
  it('OpenAI: prompt_tokens already counts the cached tokens; cache_write_tokens when reported', () => {
    const res = fromOpenAiResponse(
      {
        choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 2006,
          completion_tokens: 300,
          prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 40 },
        },
      },
      'm',
    );
    expect(res.usage).toEqual({
      input_tokens: 2006,
      output_tokens: 300,
      cache_read_tokens: 1920,
      cache_write_tokens: 40,
    });
    const parse = createOpenAiStreamParser('p', 'm');
    const events = parse(
      sse({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: null } }),
    );
    expect(usageOf(events)).toEqual({ type: 'usage', usage: { input_tokens: 10, output_tokens: 2 } });
  });

  it('Anthropic: input is input_tokens + cache reads + cache writes', () => {
    const res = fromAnthropicResponse(
      {
        content: [{ type: 'text', text: 'hi' }],
        usage: {
          input_tokens: 50,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 200,
          output_tokens: 7,
        },
      },
      'm',
    );
    expect(res.usage).toEqual({
      input_tokens: 1250,
      output_tokens: 7,
      cache_read_tokens: 1000,
      cache_write_tokens: 200,
    });
  });

  it('Anthropic streams: cache counts from message_start, or from message_delta when it repeats them', () => {
    const start = sse({
      type: 'message_start',
      message: {
        id: 'x',
        usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
      },
    });
    const a = createAnthropicStreamParser('p', 'm');
    a(start);
    const plain = a(
      sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
    );
    expect(usageOf(plain)).toEqual({
      type: 'usage',
      usage: { input_tokens: 125, output_tokens: 3, cache_read_tokens: 100, cache_write_tokens: 20 },
    });

    const b = createAnthropicStreamParser('p', 'm');
    b(start);
    const cumulative = b(
      sse({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: {
          output_tokens: 3,
          input_tokens: 5,
          cache_read_input_tokens: 120,
          cache_creation_input_tokens: 0,
        },
      }),
    );
    expect(usageOf(cumulative)).toEqual({
      type: 'usage',
      usage: { input_tokens: 125, output_tokens: 3, cache_read_tokens: 120 },
    });
  });

  it('Gemini: promptTokenCount counts cachedContentTokenCount, JSON and stream', () => {
    const usageMetadata = { promptTokenCount: 900, candidatesTokenCount: 4, cachedContentTokenCount: 800 };
    const res = fromGeminiResponse(
      { candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata },
      'm',
    );
    expect(res.usage).toEqual({ input_tokens: 900, output_tokens: 4, cache_read_tokens: 800 });
    const events = createGeminiStreamParser(
      'p',
      'm',
    )(sse({ candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata }));
    expect(usageOf(events)).toEqual({
      type: 'usage',
      usage: { input_tokens: 900, output_tokens: 4, cache_read_tokens: 800 },
    });
  });
});

describe('cache breakpoints in requests', () => {
  const eph = { type: 'ephemeral' as const };
  const req: LlmRequest = {
    model: 'm',
    system: 'big rulesdate',
    system_blocks: [
      { type: 'text', text: 'big rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'date' },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'long document', cache_control: eph }] },
      {
        role: 'assistant',
        content: [],
        tool_calls: [{ id: 'c1', name: 'f', arguments: '{}', cache_control: eph }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result', cache_control: eph },
    ],
    tools: [{ name: 'f', parameters: { type: 'object' }, cache_control: eph }],
  };

  it('Anthropic gets every breakpoint on its block: system, text, tool_use, tool_result, tool', () => {
    const body = toAnthropicRequest(req, false) as {
      system: unknown;
      messages: Array<{ content: Array<Record<string, unknown>> }>;
      tools: Array<Record<string, unknown>>;
    };
    expect(body.system).toEqual([
      { type: 'text', text: 'big rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'date' },
    ]);
    expect(body.messages[0]!.content[0]).toEqual({ type: 'text', text: 'long document', cache_control: eph });
    expect(body.messages[1]!.content[0]).toMatchObject({ type: 'tool_use', cache_control: eph });
    expect(body.messages[2]!.content[0]).toMatchObject({ type: 'tool_result', cache_control: eph });
    expect(body.tools[0]).toMatchObject({ name: 'f', cache_control: eph });
  });

  it('Anthropic keeps a plain system string when no breakpoint asks for blocks', () => {
    const body = toAnthropicRequest({ ...req, system_blocks: undefined }, false);
    expect(body.system).toBe('big rulesdate');
  });

  it('OpenAI and Gemini get none: their vendors cache prefixes by themselves', () => {
    expect(JSON.stringify(toOpenAiRequest(req, false))).not.toContain('cache_control');
    expect(JSON.stringify(toGeminiRequest(req))).not.toContain('cache_control');
    expect(toOpenAiRequest(req, false).messages).toContainEqual({ role: 'system', content: 'big rulesdate' });
  });
});

describe('cache_control values', () => {
  it.each([
    [{ type: 'ephemeral' }, undefined],
    [{ type: 'ephemeral', ttl: '1h' }, undefined],
    [null, undefined],
    [{ type: 'persistent' }, 'type'],
    [{ type: 'ephemeral', ttl: '24h' }, 'ttl'],
    [{ type: 'ephemeral', scope: 'global' }, 'scope'],
    ['ephemeral', ''],
  ])('%j → problem at %j', (value, at) => {
    expect(cacheControlProblem(value)?.at).toBe(at);
  });

  it('null and invalid values carry no breakpoint', () => {
    expect(toCacheControl(null)).toBeUndefined();
    expect(toCacheControl({ type: 'x' })).toBeUndefined();
    expect(toCacheControl({ type: 'ephemeral', ttl: '5m' })).toEqual({ type: 'ephemeral', ttl: '5m' });
  });
});
