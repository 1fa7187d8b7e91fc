import type { ProviderAdapter } from '../../adapter.js';
import { geminiHeaders, geminiUrl } from './api.js';
import { fromGeminiEmbedding, toGeminiEmbedding } from './embeddings.js';
import { toGeminiRequest } from './request.js';
import { createGeminiStreamParser, fromGeminiResponse } from './response.js';

/** Gemini streams through the URL (`:streamGenerateContent`), not a body field. */
export const geminiAdapter: ProviderAdapter = {
  format: 'gemini',
  url: geminiUrl,
  headers: geminiHeaders,
  toVendorRequest: (req) => toGeminiRequest(req),
  fromVendorResponse: fromGeminiResponse,
  createStreamParser: createGeminiStreamParser,
  toVendorEmbedding: toGeminiEmbedding,
  fromVendorEmbedding: fromGeminiEmbedding,
};
