/**
 * The one request/response/stream shape every provider adapter translates to
 * and from. Agent sessions and the gateway both speak it, so a provider
 * adapter is written once.
 */

export type ProviderFormat = 'openai' | 'anthropic' | 'gemini';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; media_type: string; data: string };

export type ContentPart = { type: 'text'; text: string } | { type: 'image'; source: ImageSource };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model produced it. */
  arguments: string;
}

export type LlmMessage =
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; content: ContentPart[]; tool_calls?: ToolCall[] }
  /** One result per message; several consecutive ones answer one multi-call turn. */
  | { role: 'tool'; tool_call_id: string; name?: string; content: string; is_error?: boolean };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface LlmRequest {
  model: string;
  system?: string;
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

export interface Usage {
  input_tokens: number;
  output_tokens: number;
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
