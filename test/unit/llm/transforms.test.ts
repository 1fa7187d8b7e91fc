import { describe, expect, it } from 'vitest';
import { UnsupportedFeatureError } from '../../../core/llm/errors.js';
import { toAnthropicRequest } from '../../../core/llm/providers/anthropic/request.js';
import {
  createAnthropicStreamParser,
  fromAnthropicResponse,
} from '../../../core/llm/providers/anthropic/response.js';
import { toGeminiRequest } from '../../../core/llm/providers/gemini/request.js';
import { createGeminiStreamParser, fromGeminiResponse } from '../../../core/llm/providers/gemini/response.js';
import { toOpenAiRequest } from '../../../core/llm/providers/openai/request.js';
import { createOpenAiStreamParser } from '../../../core/llm/providers/openai/response.js';
import type { LlmRequest } from '../../../core/llm/types.js';

/** A two-call turn and both results: the shape every adapter must carry intact. */
const toolTurn: LlmRequest = {
  model: 'm',
  system: 'be brief',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'weather in Paris and Rome?' }] },
    {
      role: 'assistant',
      content: [],
      tool_calls: [
        { id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
        { id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '{"t":20}' },
    { role: 'tool', tool_call_id: 'c2', content: '{"t":25}' },
  ],
  tools: [{ name: 'weather', description: 'w', parameters: { type: 'object' } }],
  tool_choice: 'required',
  stop: ['END'],
  max_tokens: 100,
};

describe('request transforms', () => {
  it('openai keeps system, both calls and both results in order', () => {
    const body = toOpenAiRequest(toolTurn, true) as { messages: Array<Record<string, unknown>> };
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect((body.messages[2]!.tool_calls as unknown[]).length).toBe(2);
    expect(body).toMatchObject({
      tool_choice: 'required',
      stop: ['END'],
      max_completion_tokens: 100,
      stream: true,
    });
  });

  it('anthropic merges both results into one user turn with tool_result blocks', () => {
    const body = toAnthropicRequest(toolTurn, false) as {
      messages: Array<{ role: string; content: unknown[] }>;
    };
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1]!.content).toEqual([
      { type: 'tool_use', id: 'c1', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'c2', name: 'weather', input: { city: 'Rome' } },
    ]);
    expect(body.messages[2]!.content).toHaveLength(2);
    expect(body).toMatchObject({ system: 'be brief', tool_choice: { type: 'any' }, stop_sequences: ['END'] });
  });

  it('anthropic refuses JSON mode by name instead of dropping it', () => {
    expect(() =>
      toAnthropicRequest({ ...toolTurn, response_format: { type: 'json_object' } }, false),
    ).toThrow(UnsupportedFeatureError);
  });

  it('gemini names each function result after the call it answers', () => {
    const body = toGeminiRequest(toolTurn) as { contents: Array<{ role: string; parts: unknown[] }> };
    expect(body.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(body.contents[2]!.parts).toEqual([
      { functionResponse: { name: 'weather', response: { t: 20 } } },
      { functionResponse: { name: 'weather', response: { t: 25 } } },
    ]);
    expect(body).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { stopSequences: ['END'], maxOutputTokens: 100 },
    });
  });
});

describe('response and stream transforms', () => {
  it('anthropic tool_use blocks become tool calls with JSON arguments', () => {
    const res = fromAnthropicResponse(
      {
        id: 'msg',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 3, output_tokens: 4 },
      },
      'm',
    );
    expect(res).toMatchObject({
      text: 'ok',
      finish_reason: 'tool_calls',
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    expect(res.tool_calls).toEqual([{ id: 't1', name: 'f', arguments: '{"a":1}' }]);
  });

  it('gemini STOP with function calls is a tool_calls finish', () => {
    const res = fromGeminiResponse(
      {
        candidates: [
          { content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' },
        ],
      },
      'm',
    );
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.tool_calls[0]!.id).toMatch(/^call_/);
  });

  it('stream parsers number tool calls among tools only', () => {
    const a = createAnthropicStreamParser('p', 'm');
    a({ data: JSON.stringify({ type: 'message_start', message: { id: 'x', usage: { input_tokens: 1 } } }) });
    a({
      data: JSON.stringify({
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
    });
    const start = a({
      data: JSON.stringify({
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 't', name: 'f' },
      }),
    });
    expect(start).toEqual([{ type: 'tool_call_start', index: 0, id: 't', name: 'f' }]);
    const o = createOpenAiStreamParser('p', 'm');
    expect(o({ data: '[DONE]' })).toEqual([]);
    expect(() => o({ data: JSON.stringify({ error: { message: 'boom' } }) })).toThrow('p: boom');
    const g = createGeminiStreamParser('p', 'm');
    const events = g({
      data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }] }),
    });
    expect(events.map((e) => e.type)).toEqual(['start', 'text', 'finish', 'usage']);
  });
});
