import type { ProviderAdapter } from '../../adapter.js';
import { anthropicHeaders, anthropicUrl } from './api.js';
import { toAnthropicRequest } from './request.js';
import { createAnthropicStreamParser, fromAnthropicResponse } from './response.js';

/** Anthropic has no embeddings endpoint, so the adapter offers none. */
export const anthropicAdapter: ProviderAdapter = {
  format: 'anthropic',
  url: anthropicUrl,
  headers: anthropicHeaders,
  toVendorRequest: toAnthropicRequest,
  fromVendorResponse: fromAnthropicResponse,
  createStreamParser: createAnthropicStreamParser,
};
