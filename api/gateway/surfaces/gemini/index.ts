import type { Surface } from '../../surface.js';
import { checkFields, GEMINI_RULES } from '../numbers.js';
import { validateGeminiCachedContent } from './cached-content.js';
import { parseGeminiEmbedding, renderGeminiEmbedding } from './embeddings.js';
import { geminiErrorBody } from './errors.js';
import { parseGeminiRequest } from './request.js';
import { createGeminiStreamRenderer, renderGeminiResponse } from './response.js';

export const geminiSurface: Surface = {
  format: 'gemini',
  errorBody: geminiErrorBody,
  validateChat: (body) => {
    checkFields(body, GEMINI_RULES);
    validateGeminiCachedContent(body);
  },
  parseRequest: parseGeminiRequest,
  renderResponse: renderGeminiResponse,
  createStreamRenderer: createGeminiStreamRenderer,
  parseEmbedding: parseGeminiEmbedding,
  renderEmbedding: renderGeminiEmbedding,
};
