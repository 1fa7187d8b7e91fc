import type { FinishReason, LlmResponse, LlmStreamEvent, Usage } from '../../../../core/llm/types.js';
import type { GatewayError } from '../../errors.js';
import { sse, type StreamRenderer } from '../../surface.js';
import { openaiErrorBody } from './errors.js';
import { str } from '../json.js';

const FINISH: Record<FinishReason, string> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  error: 'stop',
};

const toolCalls = (res: LlmResponse) =>
  res.tool_calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));

/**
 * OpenAI's usage: prompt_tokens counts every input token, cached ones
 * included; `cached_tokens` is always there (as OpenAI sends it), and
 * `cache_write_tokens` (newer OpenAI models; an Anthropic provider's cache
 * writes) only when some were written.
 */
const usageOf = (u: Usage) => ({
  prompt_tokens: u.input_tokens,
  completion_tokens: u.output_tokens,
  total_tokens: u.input_tokens + u.output_tokens,
  prompt_tokens_details: {
    cached_tokens: u.cache_read_tokens ?? 0,
    ...(u.cache_write_tokens ? { cache_write_tokens: u.cache_write_tokens } : {}),
  },
});

export function renderOpenAiResponse(res: LlmResponse): unknown {
  const calls = toolCalls(res);
  return {
    id: res.id.startsWith('chatcmpl') ? res.id : `chatcmpl-${res.id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: res.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: res.text === '' && calls.length ? null : res.text,
          refusal: null,
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: FINISH[res.finish_reason],
      },
    ],
    usage: usageOf(res.usage),
  };
}

/** Chunks end with `data: [DONE]`; usage gets its own chunk only when `stream_options.include_usage` asked. */
export function createOpenAiStreamRenderer(body: Record<string, unknown>): StreamRenderer {
  const includeUsage =
    (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  let id = 'chatcmpl-gateway';
  let model = str(body.model);
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}) =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, ...choice }] : [],
      ...extra,
    });
  return {
    event(ev: LlmStreamEvent): string {
      switch (ev.type) {
        case 'start':
          id = ev.id.startsWith('chatcmpl') ? ev.id : `chatcmpl-${ev.id}`;
          model = ev.model;
          return chunk({ delta: { role: 'assistant', content: '' } });
        case 'text':
          return chunk({ delta: { content: ev.text } });
        case 'tool_call_start':
          return chunk({
            delta: {
              tool_calls: [
                { index: ev.index, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } },
              ],
            },
          });
        case 'tool_call_delta':
          return chunk({
            delta: { tool_calls: [{ index: ev.index, function: { arguments: ev.arguments } }] },
          });
        case 'finish':
          return chunk({ delta: {}, finish_reason: FINISH[ev.finish_reason] });
        case 'usage':
          if (!includeUsage) return '';
          return chunk(null, { usage: usageOf(ev.usage) });
      }
    },
    end: () => 'data: [DONE]\n\n',
    error: (err: GatewayError) => sse(openaiErrorBody(err)),
  };
}
