import type { FinishReason, LlmResponse, LlmStreamEvent, Usage } from '../../../../core/llm/types.js';
import type { GatewayError } from '../../errors.js';
import { sse, type StreamRenderer } from '../../surface.js';
import { geminiErrorBody } from './errors.js';
import { str, toolArguments } from '../json.js';

const FINISH: Record<FinishReason, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
  error: 'OTHER',
};

/**
 * promptTokenCount counts every input token, cached ones included; Gemini
 * leaves cachedContentTokenCount out when nothing was read from a cache, and
 * has no count of cache writes (they are part of promptTokenCount).
 */
const usageMetadata = (u: Usage) => ({
  promptTokenCount: u.input_tokens,
  candidatesTokenCount: u.output_tokens,
  totalTokenCount: u.input_tokens + u.output_tokens,
  ...(u.cache_read_tokens ? { cachedContentTokenCount: u.cache_read_tokens } : {}),
});

const candidate = (parts: unknown[], finishReason?: string) => ({
  content: { role: 'model', parts },
  ...(finishReason ? { finishReason } : {}),
  index: 0,
});

export function renderGeminiResponse(res: LlmResponse): unknown {
  const parts: unknown[] = [
    ...(res.text ? [{ text: res.text }] : []),
    ...res.tool_calls.map((c) => ({
      functionCall: { id: c.id, name: c.name, args: toolArguments(c.arguments) },
    })),
  ];
  return {
    candidates: [candidate(parts, FINISH[res.finish_reason])],
    usageMetadata: usageMetadata(res.usage),
    modelVersion: res.model,
    responseId: res.id,
  };
}

/**
 * Text goes out chunk by chunk; a function call is sent whole (as Gemini
 * does), once its arguments are complete, with the final chunk.
 */
export function createGeminiStreamRenderer(body: Record<string, unknown>): StreamRenderer {
  let model = str(body.model);
  let id = '';
  let finish = 'STOP';
  let usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const calls = new Map<number, { id: string; name: string; args: string }>();
  const chunk = (parts: unknown[], finishReason?: string, withUsage = false) =>
    sse({
      candidates: [candidate(parts, finishReason)],
      ...(withUsage ? { usageMetadata: usageMetadata(usage) } : {}),
      modelVersion: model,
      responseId: id,
    });
  return {
    event(e: LlmStreamEvent): string {
      switch (e.type) {
        case 'start':
          model = e.model;
          id = e.id;
          return '';
        case 'text':
          return chunk([{ text: e.text }]);
        case 'tool_call_start':
          calls.set(e.index, { id: e.id, name: e.name, args: '' });
          return '';
        case 'tool_call_delta': {
          const call = calls.get(e.index);
          if (call) call.args += e.arguments;
          return '';
        }
        case 'finish':
          finish = FINISH[e.finish_reason];
          return '';
        case 'usage':
          usage = e.usage;
          return '';
      }
    },
    end: () => {
      const parts = [...calls.values()].map((c) => ({
        functionCall: { id: c.id, name: c.name, args: toolArguments(c.args) },
      }));
      return chunk(parts.length ? parts : [{ text: '' }], finish, true);
    },
    error: (err: GatewayError) => sse(geminiErrorBody(err)),
  };
}
