import type { UpstreamCall } from './http.js';
import type {
  EmbeddingRequest,
  EmbeddingResponse,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  ProviderFormat,
  ProviderTarget,
} from './types.js';

export type Endpoint = 'chat' | 'stream' | 'embed';

/** Turns one vendor SSE event into internal events; throws UpstreamError on an error event. */
export type StreamParser = (sse: { event?: string; data: string }) => LlmStreamEvent[];

/**
 * What each provider folder implements: where and how to call (builder), and
 * the translations between its wire format and the internal shape.
 */
export interface ProviderAdapter {
  format: ProviderFormat;
  url(target: ProviderTarget, model: string, endpoint: Endpoint): string;
  headers(target: ProviderTarget): Record<string, string>;
  /** Internal → vendor body (the body carries `stream` where the vendor expects it). */
  toVendorRequest(req: LlmRequest, stream: boolean): Record<string, unknown>;
  /** Vendor response body → internal. */
  fromVendorResponse(body: unknown, model: string): LlmResponse;
  createStreamParser(providerName: string, model: string): StreamParser;
  toVendorEmbedding?(req: EmbeddingRequest): Record<string, unknown>;
  fromVendorEmbedding?(body: unknown, model: string): EmbeddingResponse;
}

export function buildCall(
  adapter: ProviderAdapter,
  target: ProviderTarget,
  model: string,
  endpoint: Endpoint,
  body: unknown,
): UpstreamCall {
  return {
    url: adapter.url(target, model, endpoint),
    headers: adapter.headers(target),
    body,
    stream: endpoint === 'stream',
  };
}
