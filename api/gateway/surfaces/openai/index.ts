import type { Surface } from '../../surface.js';
import { checkFields, OPENAI_CHAT_RULES } from '../numbers.js';
import { stripOpenAiCacheControl, validateOpenAiCacheControl } from './cache-control.js';
import { parseOpenAiEmbedding, renderOpenAiEmbedding } from './embeddings.js';
import { openaiErrorBody } from './errors.js';
import { parseOpenAiRequest } from './request.js';
import { createOpenAiStreamRenderer, renderOpenAiResponse } from './response.js';

export const openaiSurface: Surface = {
  format: 'openai',
  errorBody: openaiErrorBody,
  validateChat: (body) => {
    checkFields(body, OPENAI_CHAT_RULES);
    validateOpenAiCacheControl(body);
  },
  sameFormatChatBody: stripOpenAiCacheControl,
  parseRequest: parseOpenAiRequest,
  renderResponse: renderOpenAiResponse,
  createStreamRenderer: createOpenAiStreamRenderer,
  parseEmbedding: parseOpenAiEmbedding,
  renderEmbedding: renderOpenAiEmbedding,
};
