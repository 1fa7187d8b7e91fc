import { buildCall } from './adapter.js';
import { redactUpstreamError, UnsupportedFeatureError, UpstreamError } from './errors.js';
import { postUpstream, readSse } from './http.js';
import { ADAPTERS } from './providers/index.js';
import type {
  EmbeddingRequest,
  EmbeddingResponse,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  ProviderTarget,
} from './types.js';

/** One non-streaming call in the internal shape. */
export async function complete(
  target: ProviderTarget,
  req: LlmRequest,
  signal?: AbortSignal,
): Promise<LlmResponse> {
  const adapter = ADAPTERS[target.type];
  const call = buildCall(adapter, target, req.model, 'chat', adapter.toVendorRequest(req, false));
  const res = await postUpstream(target, call, signal);
  return adapter.fromVendorResponse(await res.json(), req.model);
}

/**
 * Opens the upstream stream (throwing UpstreamError before any event if the
 * provider refuses) and returns its events, translated one vendor event at a
 * time. A stream that ends without a finish event is a break, not an answer.
 */
export async function openStream(
  target: ProviderTarget,
  req: LlmRequest,
  signal?: AbortSignal,
): Promise<AsyncGenerator<LlmStreamEvent>> {
  const adapter = ADAPTERS[target.type];
  const call = buildCall(adapter, target, req.model, 'stream', adapter.toVendorRequest(req, true));
  const res = await postUpstream(target, call, signal);
  const parse = adapter.createStreamParser(target.name, req.model);
  return (async function* events() {
    let finished = false;
    for await (const sse of readSse(res, target.name)) {
      let events: LlmStreamEvent[];
      try {
        events = parse(sse);
      } catch (err) {
        // A stream's error event is the vendor's own text, which may echo our credentials.
        if (err instanceof UpstreamError) throw redactUpstreamError(err, target);
        throw new UpstreamError(502, `${target.name}: unreadable stream event`, false);
      }
      for (const ev of events) {
        if (ev.type === 'finish') finished = true;
        yield ev;
      }
    }
    if (!finished)
      throw new UpstreamError(502, `${target.name}: stream ended before the answer was complete`, false);
  })();
}

export async function embed(
  target: ProviderTarget,
  req: EmbeddingRequest,
  signal?: AbortSignal,
): Promise<EmbeddingResponse> {
  const adapter = ADAPTERS[target.type];
  if (!adapter.toVendorEmbedding || !adapter.fromVendorEmbedding) {
    throw new UnsupportedFeatureError('embeddings', target.type);
  }
  const call = buildCall(adapter, target, req.model, 'embed', adapter.toVendorEmbedding(req));
  const res = await postUpstream(target, call, signal);
  return adapter.fromVendorEmbedding(await res.json(), req.model);
}
