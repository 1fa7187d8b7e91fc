import type {
  EmbeddingRequest,
  EmbeddingResponse,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  ProviderFormat,
} from '../../core/llm/types.js';
import type { GatewayError } from './errors.js';
import type { GatewayKey } from '../../core/security/virtual-keys.js';

/** Turns internal stream events into the surface's SSE text, one event at a time. */
export interface StreamRenderer {
  event(ev: LlmStreamEvent): string;
  /** The success terminator (and anything held for it, e.g. Gemini's final chunk). */
  end(): string;
  /** An error event; after it the stream ends without a terminator. */
  error(err: GatewayError): string;
}

/**
 * One vendor-compatible surface: how callers speak to the gateway. Parsing
 * throws UnsupportedFeatureError for anything with no equivalent in the
 * target format, so nothing is dropped silently.
 */
export interface Surface {
  format: ProviderFormat;
  /**
   * Its bodies are not the chat API of a provider of `format`, so they are
   * always translated, never passed through (the Responses API goes to an
   * OpenAI provider as Chat Completions).
   */
  alwaysTranslate?: boolean;
  /**
   * For a surface whose requests depend on stored state (the Responses API):
   * called once the key and model are known, before admission. May refuse
   * the request (a GatewayError) and returns what this request uses instead.
   */
  begin?(key: GatewayKey, body: Record<string, unknown>): Promise<ScopedRequest>;
  errorBody(err: GatewayError): unknown;
  /**
   * Refuses a chat request the gateway can tell is malformed whatever the
   * provider (a bad `cache_control`…), before it is admitted: nothing is
   * counted or sent. Throws a GatewayError naming the field.
   */
  validateChat?(body: Record<string, unknown>): void;
  /** A chat body as it goes to a provider of this same format (default: as received). */
  sameFormatChatBody?(body: Record<string, unknown>): Record<string, unknown>;
  parseRequest(body: Record<string, unknown>, model: string, target: ProviderFormat): LlmRequest;
  renderResponse(res: LlmResponse): unknown;
  createStreamRenderer(body: Record<string, unknown>): StreamRenderer;
  parseEmbedding?(body: Record<string, unknown>, model: string, target: ProviderFormat): EmbeddingRequest;
  renderEmbedding?(res: EmbeddingResponse, body: Record<string, unknown>): unknown;
}

/** One request of a surface with per-request state (see Surface.begin). */
export interface ScopedRequest {
  /** Renders this request's answer (and keeps what it rendered, for `persist`). */
  surface: Surface;
  /** The body to admit and translate (e.g. with the earlier turns of a conversation). */
  body: Record<string, unknown>;
  /**
   * Stores what the successful answer needs stored, concurrently with its
   * usage row and before the answer's last bytes leave; never rejects.
   */
  persist?: () => Promise<void>;
}

export const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
