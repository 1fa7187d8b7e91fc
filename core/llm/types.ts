/**
 * The one request/response/stream shape every provider adapter translates to
 * and from. Agent sessions and the gateway both speak it, so a provider
 * adapter is written once.
 */

export type ProviderFormat = 'openai' | 'anthropic' | 'gemini';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; media_type: string; data: string };

/**
 * A prompt-cache breakpoint (Anthropic's `cache_control`): the prompt up to
 * and including the block that carries it may be cached. Only Anthropic
 * providers take it; the other adapters leave it out (their vendors cache
 * prefixes by themselves).
 */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export type TextPart = { type: 'text'; text: string; cache_control?: CacheControl };
export type ContentPart = TextPart | { type: 'image'; source: ImageSource; cache_control?: CacheControl };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model produced it. */
  arguments: string;
  cache_control?: CacheControl;
}

export type LlmMessage =
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; content: ContentPart[]; tool_calls?: ToolCall[] }
  /** One result per message; several consecutive ones answer one multi-call turn. */
  | {
      role: 'tool';
      tool_call_id: string;
      name?: string;
      content: string;
      is_error?: boolean;
      cache_control?: CacheControl;
    };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  cache_control?: CacheControl;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface LlmRequest {
  model: string;
  system?: string;
  /**
   * The system prompt as the caller's separate text blocks, when one of them
   * carries a cache breakpoint (`system` is still their text, joined): an
   * Anthropic provider gets these blocks, so the breakpoint stays where the
   * caller put it.
   */
  system_blocks?: TextPart[];
  /** Further system messages after `system` (an agent session's conversation summary). */
  extra_system?: string[];
  messages: LlmMessage[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  stop?: string[];
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/**
 * Tokens of one call. `input_tokens` counts EVERY prompt token, cache reads
 * and cache writes included (as OpenAI and Gemini count them, and as the
 * OpenTelemetry GenAI conventions define `gen_ai.usage.input_tokens`);
 * Anthropic's `input_tokens` excludes them, so its adapter adds its two cache
 * counts. The cache counts are subsets of `input_tokens`, present when the
 * provider reported a non-zero count: uncached input is
 * `input_tokens - cache_read_tokens - cache_write_tokens`.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, those read from the provider's prompt cache. */
  cache_read_tokens?: number;
  /** Of `input_tokens`, those written to the provider's prompt cache. */
  cache_write_tokens?: number;
}

export interface LlmResponse {
  id: string;
  model: string;
  text: string;
  tool_calls: ToolCall[];
  finish_reason: FinishReason;
  usage: Usage;
}

/**
 * Stream events. Tool calls are announced with `tool_call_start` and their
 * arguments arrive as `tool_call_delta` fragments under the same `index`.
 */
export type LlmStreamEvent =
  | { type: 'start'; id: string; model: string }
  | { type: 'text'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'finish'; finish_reason: FinishReason }
  | { type: 'usage'; usage: Usage };

export interface EmbeddingRequest {
  model: string;
  input: string[];
  dimensions?: number;
}

export interface EmbeddingResponse {
  model: string;
  embeddings: number[][];
  usage: { input_tokens: number };
}

/** What an adapter needs to reach a provider; the API key is decrypted by the caller just for the call. */
export interface ProviderTarget {
  name: string;
  type: ProviderFormat;
  base_url: string | null;
  api_key: string | null;
  headers: Record<string, string>;
  connect_timeout_ms: number;
  timeout_ms: number;
  /** Gateway hops behind this call (the gateway's incoming x-agent-server-hops); the call sends one more. */
  hops?: number;
}
