import { StoreEmbeddingError } from '../../../core/memory/errors.js';
import { UnsupportedFeatureError, UpstreamError } from '../../../core/llm/errors.js';
import { BudgetExceededError, RateLimitedError, UnpricedModelError } from '../../../core/metering/errors.js';
import { ProtocolError } from './errors.js';

/**
 * The store's embedding call failing, in the protocol's words: the
 * project's setting cannot be used or the key refuses (4xx: retrying the
 * same request cannot help, except a rate limit's 429), the vendor failed (502).
 */
function protocolErrorOf(err: unknown): unknown {
  if (err instanceof StoreEmbeddingError || err instanceof UnsupportedFeatureError)
    return new ProtocolError(400, `store embedding: ${err.message}`);
  if (err instanceof UnpricedModelError) return new ProtocolError(400, err.message);
  if (err instanceof RateLimitedError || err instanceof BudgetExceededError)
    return new ProtocolError(429, err.message);
  if (err instanceof UpstreamError)
    return new ProtocolError(502, `store embedding model failed: ${err.message}`);
  return err;
}

/** Awaits a store call that may embed, its embedding failures as ProtocolErrors. */
export async function storeFailure<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw protocolErrorOf(err);
  }
}
