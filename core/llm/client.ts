import { buildCall } from './adapter.js';
import { redactUpstreamError, UnsupportedFeatureError, UpstreamError } from './errors.js';
import { postUpstream, readSse, type UpstreamCall } from './http.js';
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

/** One vendor stream event as received (its SSE `event` and `data`), and what it says in the internal shape. */
export interface VendorEvent {
  event?: string | undefined;
  data: string;
  parsed: LlmStreamEvent[];
}

/**
 * Opens a vendor stream (throwing UpstreamError before any event if the
 * provider refuses) and returns its events, each read as it arrives: the one
 * reader of vendor streams, whether they are translated or passed through.
 * An event the vendor's format cannot read is a 502 ("unreadable stream
 * event"); the vendor's own error event becomes its error, redacted (it may
 * echo our credentials); a stream that ends without a finish event is a
 * break, not an answer.
 */
export async function openVendorStream(
  target: ProviderTarget,
  call: UpstreamCall,
  model: string,
  signal?: AbortSignal,
): Promise<AsyncGenerator<VendorEvent>> {
  const res = await postUpstream(target, call, signal);
  const parse = ADAPTERS[target.type].createStreamParser(target.name, model);
  return (async function* events() {
    let finished = false;
    for await (const sse of readSse(res, target.name)) {
      let parsed: LlmStreamEvent[];
      try {
        parsed = parse(sse);
      } catch (err) {
        if (err instanceof UpstreamError) throw redactUpstreamError(err, target);
        throw new UpstreamError(502, `${target.name}: unreadable stream event`, false);
      }
      if (parsed.some((ev) => ev.type === 'finish')) finished = true;
      yield { event: sse.event, data: sse.data, parsed };
    }
    if (!finished)
      throw new UpstreamError(502, `${target.name}: stream ended before the answer was complete`, false);
  })();
}

/** A streamed call in the internal shape, translated one vendor event at a time (see openVendorStream). */
export async function openStream(
  target: ProviderTarget,
  req: LlmRequest,
  signal?: AbortSignal,
): Promise<AsyncGenerator<LlmStreamEvent>> {
  const adapter = ADAPTERS[target.type];
  const call = buildCall(adapter, target, req.model, 'stream', adapter.toVendorRequest(req, true));
  const events = await openVendorStream(target, call, req.model, signal);
  return (async function* translated() {
    for await (const ev of events) yield* ev.parsed;
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
