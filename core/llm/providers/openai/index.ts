import type { ProviderAdapter } from '../../adapter.js';
import { openaiHeaders, openaiUrl } from './api.js';
import { fromOpenAiEmbedding, toOpenAiEmbedding } from './embeddings.js';
import { toOpenAiRequest } from './request.js';
import { createOpenAiStreamParser, fromOpenAiResponse } from './response.js';

export const openaiAdapter: ProviderAdapter = {
  format: 'openai',
  url: openaiUrl,
  headers: openaiHeaders,
  toVendorRequest: toOpenAiRequest,
  fromVendorResponse: fromOpenAiResponse,
  createStreamParser: createOpenAiStreamParser,
  toVendorEmbedding: toOpenAiEmbedding,
  fromVendorEmbedding: fromOpenAiEmbedding,
};
