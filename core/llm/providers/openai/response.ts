import type { StreamParser } from '../../adapter.js';
import { UpstreamError } from '../../errors.js';
import type { FinishReason, LlmResponse, LlmStreamEvent, ToolCall, Usage } from '../../types.js';
import { usageWithCache } from '../../usage.js';

interface OpenAiToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface OpenAiChoice {
  message?: { content?: string | null; tool_calls?: OpenAiToolCall[] };
  delta?: { content?: string | null; tool_calls?: OpenAiToolCall[] };
  finish_reason?: string | null;
}
interface OpenAiBody {
  id?: string;
  model?: string;
  choices?: OpenAiChoice[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    /** Both counts are part of prompt_tokens; writes are reported (and billed) by newer models only. */
    prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  } | null;
  error?: { message?: string; type?: string };
}

export function finishFromOpenAi(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

const usageOf = (u: OpenAiBody['usage']): Usage =>
  usageWithCache(
    u?.prompt_tokens ?? 0,
    u?.completion_tokens ?? 0,
    u?.prompt_tokens_details?.cached_tokens ?? 0,
    u?.prompt_tokens_details?.cache_write_tokens ?? 0,
  );

/** Chat completion → internal. */
export function fromOpenAiResponse(raw: unknown, model: string): LlmResponse {
  const body = raw as OpenAiBody;
  const choice = body.choices?.[0];
  const tool_calls: ToolCall[] = (choice?.message?.tool_calls ?? []).map((c) => ({
    id: c.id ?? '',
    name: c.function?.name ?? '',
    arguments: c.function?.arguments ?? '',
  }));
  return {
    id: body.id ?? '',
    model: body.model ?? model,
    text: choice?.message?.content ?? '',
    tool_calls,
    finish_reason: finishFromOpenAi(choice?.finish_reason),
    usage: usageOf(body.usage),
  };
}

/** Chat completion chunks → internal events. */
export function createOpenAiStreamParser(providerName: string, model: string): StreamParser {
  let started = false;
  return ({ data }) => {
    if (data === '[DONE]') return [];
    const chunk = JSON.parse(data) as OpenAiBody;
    if (chunk.error)
      throw new UpstreamError(502, `${providerName}: ${chunk.error.message ?? 'error'}`, false);
    const out: LlmStreamEvent[] = [];
    if (!started) {
      started = true;
      out.push({ type: 'start', id: chunk.id ?? '', model: chunk.model ?? model });
    }
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) out.push({ type: 'text', text: choice.delta.content });
    for (const c of choice?.delta?.tool_calls ?? []) {
      const index = c.index ?? 0;
      if (c.id || c.function?.name) {
        out.push({ type: 'tool_call_start', index, id: c.id ?? '', name: c.function?.name ?? '' });
      }
      if (c.function?.arguments)
        out.push({ type: 'tool_call_delta', index, arguments: c.function.arguments });
    }
    if (choice?.finish_reason)
      out.push({ type: 'finish', finish_reason: finishFromOpenAi(choice.finish_reason) });
    if (chunk.usage) out.push({ type: 'usage', usage: usageOf(chunk.usage) });
    return out;
  };
}
