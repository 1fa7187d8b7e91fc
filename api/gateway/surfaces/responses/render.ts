import type { FinishReason, LlmResponse, Usage } from '../../../../core/llm/types.js';
import { newId, outputMessage, type ItemStatus, type OutputItem } from './items.js';
import type { ResponsesRequest } from './request.js';

/** The Responses API's usage object, with cached tokens whichever provider answered. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * `input_tokens` counts every prompt token, cached ones included;
 * `cached_tokens` is always there (as OpenAI sends it) and
 * `cache_write_tokens` (an Anthropic provider's cache writes) only when some
 * were written, as on the Chat Completions surface. The internal usage has
 * no count of reasoning tokens (they are inside `output_tokens`), so
 * `reasoning_tokens` is 0.
 */
export const usageOf = (u: Usage): ResponsesUsage => ({
  input_tokens: u.input_tokens,
  input_tokens_details: {
    cached_tokens: u.cache_read_tokens ?? 0,
    ...(u.cache_write_tokens ? { cache_write_tokens: u.cache_write_tokens } : {}),
  },
  output_tokens: u.output_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: u.input_tokens + u.output_tokens,
});

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** How an answer ended, as a response status; a cut-off answer is `incomplete` with its reason. */
export function statusOf(reason: FinishReason): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  if (reason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export const completedAt = (status: ResponseStatus): number | null =>
  status === 'completed' ? Math.floor(Date.now() / 1000) : null;

export const itemStatus = (status: ResponseStatus): ItemStatus =>
  status === 'completed' ? 'completed' : status === 'in_progress' ? 'in_progress' : 'incomplete';

/** The state of an answer that the response object shows. */
export interface Answer {
  status: ResponseStatus;
  model: string;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  incomplete_details: { reason: string } | null;
  error: { code: string; message: string } | null;
  /** Unix seconds; fixed when the answer is, so a stored response reads back as it was sent. */
  completed_at: number | null;
}

/** One request's response identity and settings: the part of the object that does not change as it answers. */
export interface ResponseShell {
  id: string;
  /** Unix seconds. */
  created_at: number;
  request: ResponsesRequest;
}

/**
 * The response object (OpenAI's field set and order). It echoes the request:
 * instructions, tools, tool_choice, text, sampling, metadata, store and
 * previous_response_id; reasoning, truncation and service tier at the only
 * values the gateway offers.
 */
export function responseObject(shell: ResponseShell, answer: Answer): Record<string, unknown> {
  const r = shell.request;
  return {
    id: shell.id,
    object: 'response',
    created_at: shell.created_at,
    status: answer.status,
    background: false,
    completed_at: answer.completed_at,
    error: answer.error,
    incomplete_details: answer.incomplete_details,
    instructions: r.instructions,
    max_output_tokens: r.max_output_tokens,
    max_tool_calls: null,
    model: answer.model,
    output: answer.output,
    parallel_tool_calls: r.parallel_tool_calls,
    previous_response_id: r.previous_response_id,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: r.store,
    temperature: r.temperature,
    text: r.text,
    tool_choice: r.tool_choice,
    tools: r.tools,
    top_logprobs: 0,
    top_p: r.top_p,
    truncation: 'disabled',
    usage: answer.usage,
    user: r.user,
    metadata: r.metadata,
  };
}

/** A whole (non-streamed) answer: its text as one message, then each call as a function_call item. */
export function answerOf(res: LlmResponse): Answer {
  const { status, incomplete_details } = statusOf(res.finish_reason);
  const output: OutputItem[] = [];
  if (res.text) output.push(outputMessage(newId('msg'), res.text, itemStatus(status)));
  for (const c of res.tool_calls)
    output.push({
      id: newId('fc'),
      type: 'function_call',
      call_id: c.id,
      name: c.name,
      arguments: c.arguments,
      status: itemStatus(status),
    });
  return {
    status,
    model: res.model,
    output,
    usage: usageOf(res.usage),
    incomplete_details,
    error: null,
    completed_at: completedAt(status),
  };
}
