/**
 * The Responses surface below HTTP: its stream renderer (event order,
 * sequence numbers, interleaved calls, a cut-off answer, a break), the
 * translation of a conversation into the internal request, and the
 * retention setting.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../core/config.js';
import { UnsupportedFeatureError } from '../../../core/llm/errors.js';
import type { LlmStreamEvent } from '../../../core/llm/types.js';
import { GatewayError } from '../../../api/gateway/errors.js';
import type { Answer } from '../../../api/gateway/surfaces/responses/render.js';
import { parseResponsesRequest } from '../../../api/gateway/surfaces/responses/request.js';
import { createResponsesStreamRenderer } from '../../../api/gateway/surfaces/responses/stream.js';
import { toLlmRequest } from '../../../api/gateway/surfaces/responses/translate.js';

type Event = { type: string; sequence_number: number } & Record<string, unknown>;

function render(events: LlmStreamEvent[], end: 'end' | GatewayError = 'end') {
  let answer: Answer | undefined;
  const shell = { id: 'resp_x', created_at: 1, request: parseResponsesRequest({ input: 'hi' }) };
  const r = createResponsesStreamRenderer(shell, 'asked-model', (a) => (answer = a));
  const text = events.map((e) => r.event(e)).join('') + (end === 'end' ? r.end() : r.error(end));
  const parsed = text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [name, data] = block.split('\n');
      const ev = JSON.parse(data!.slice('data: '.length)) as Event;
      expect(name).toBe(`event: ${ev.type}`);
      return ev;
    });
  return { events: parsed, answer };
}

describe('the Responses stream renderer', () => {
  it('text, then two calls whose argument deltas interleave, cut off by the token limit', () => {
    const { events, answer } = render([
      { type: 'start', id: 'up-1', model: 'vendor-model' },
      { type: 'text', text: 'Checking ' },
      { type: 'text', text: 'both.' },
      { type: 'tool_call_start', index: 0, id: 'call_a', name: 'weather' },
      { type: 'tool_call_start', index: 1, id: 'call_b', name: 'weather' },
      { type: 'tool_call_delta', index: 1, arguments: '{"city":"Rome"}' },
      { type: 'tool_call_delta', index: 0, arguments: '{"city":' },
      { type: 'tool_call_delta', index: 0, arguments: '"Paris"}' },
      { type: 'finish', finish_reason: 'length' },
      { type: 'usage', usage: { input_tokens: 10, output_tokens: 3, cache_read_tokens: 4 } },
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => [e.type, e.output_index])).toEqual([
      ['response.created', undefined],
      ['response.in_progress', undefined],
      ['response.output_item.added', 0],
      ['response.content_part.added', 0],
      ['response.output_text.delta', 0],
      ['response.output_text.delta', 0],
      ['response.output_text.done', 0],
      ['response.content_part.done', 0],
      ['response.output_item.done', 0],
      ['response.output_item.added', 1],
      ['response.output_item.added', 2],
      ['response.function_call_arguments.delta', 2],
      ['response.function_call_arguments.delta', 1],
      ['response.function_call_arguments.delta', 1],
      ['response.function_call_arguments.done', 1],
      ['response.output_item.done', 1],
      ['response.function_call_arguments.done', 2],
      ['response.output_item.done', 2],
      ['response.incomplete', undefined],
    ]);
    const last = events.at(-1)!.response as Record<string, unknown>;
    expect(last).toMatchObject({
      id: 'resp_x',
      status: 'incomplete',
      model: 'vendor-model',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 3,
        total_tokens: 13,
      },
      output: [
        // Finished when the model went on to its calls; the calls were still open at the cut.
        { type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Checking both.' }] },
        { type: 'function_call', call_id: 'call_a', arguments: '{"city":"Paris"}', status: 'incomplete' },
        { type: 'function_call', call_id: 'call_b', arguments: '{"city":"Rome"}', status: 'incomplete' },
      ],
    });
    // What is stored is what the caller was told.
    expect(answer?.output).toEqual(last.output);
    // Every item-scoped event names its item.
    const ids = (last.output as Array<{ id: string }>).map((o) => o.id);
    for (const e of events.filter((e) => 'item_id' in e))
      expect(e.item_id).toBe(ids[e.output_index as number]);
  });

  it('a break after the start: response.failed with the partial output, then an error event', () => {
    const err = new GatewayError(502, 'upstream', 'p: stream broke');
    const { events, answer } = render(
      [
        { type: 'start', id: 'u', model: 'm' },
        { type: 'text', text: 'half' },
      ],
      err,
    );
    expect(events.slice(-2)).toMatchObject([
      {
        type: 'response.failed',
        response: {
          status: 'failed',
          error: { code: 'server_error', message: 'p: stream broke' },
          output: [{ type: 'message', content: [{ text: 'half' }] }],
        },
      },
      { type: 'error', code: 'server_error', message: 'p: stream broke', param: null },
    ]);
    expect(answer).toBeUndefined();
  });

  it('a break before anything was sent: the error event alone', () => {
    const { events } = render([], new GatewayError(429, 'rate_limit', 'slow down'));
    expect(events).toEqual([
      { type: 'error', sequence_number: 0, code: 'rate_limit_exceeded', message: 'slow down', param: null },
    ]);
  });
});

describe('a Responses conversation as the internal request', () => {
  const req = parseResponsesRequest({
    instructions: 'Be brief.',
    input: [
      { role: 'developer', content: 'Answer in French.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'c1', output: '21' },
      {
        type: 'function_call_output',
        call_id: 'c2',
        output: [
          { type: 'input_text', text: '2' },
          { type: 'input_text', text: '3' },
        ],
      },
    ],
    tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' } }],
    parallel_tool_calls: false,
    text: { format: { type: 'json_object' } },
  });

  it('instructions lead the system prompt; calls join the assistant turn before them; results carry the call’s name', () => {
    const llm = toLlmRequest(req, req.input, 'm', 'openai');
    expect(llm.system).toBe('Be brief.\n\nAnswer in French.');
    expect(llm.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Checking.' }],
        tool_calls: [
          { id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
          { id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', name: 'weather', content: '21' },
      { role: 'tool', tool_call_id: 'c2', name: 'weather', content: '23' },
    ]);
    expect(llm).toMatchObject({ parallel_tool_calls: false, response_format: { type: 'json_object' } });
    expect(llm.tool_choice).toBeUndefined();
  });

  it('a JSON format to an Anthropic provider names the Responses field', () => {
    expect(() => toLlmRequest(req, req.input, 'm', 'anthropic')).toThrowError(UnsupportedFeatureError);
    expect(() => toLlmRequest(req, req.input, 'm', 'anthropic')).toThrowError(/text\.format json_object/);
  });
});

describe('GATEWAY_RESPONSES_RETENTION_DAYS', () => {
  it('defaults to 30 days, takes fractions, and a bad value stops start-up naming it', () => {
    expect(loadConfig({}).gateway.responsesRetentionDays).toBe(30);
    expect(loadConfig({ GATEWAY_RESPONSES_RETENTION_DAYS: '0.5' }).gateway.responsesRetentionDays).toBe(0.5);
    for (const bad of ['0', '-1', 'forever', '100000'])
      expect(() => loadConfig({ GATEWAY_RESPONSES_RETENTION_DAYS: bad })).toThrowError(
        expect.objectContaining({
          name: ConfigError.name,
          message: expect.stringContaining('GATEWAY_RESPONSES_RETENTION_DAYS') as string,
        }),
      );
  });
});
