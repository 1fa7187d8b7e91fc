import type { Surface } from '../../surface.js';
import { checkFields, ANTHROPIC_RULES } from '../numbers.js';
import { validateAnthropicCacheControl } from './cache-control.js';
import { anthropicErrorBody } from './errors.js';
import { parseAnthropicRequest } from './request.js';
import { createAnthropicStreamRenderer, renderAnthropicResponse } from './response.js';

/** Anthropic has no embeddings API, so the surface offers none. */
export const anthropicSurface: Surface = {
  format: 'anthropic',
  errorBody: anthropicErrorBody,
  validateChat: (body) => {
    checkFields(body, ANTHROPIC_RULES);
    validateAnthropicCacheControl(body);
  },
  parseRequest: parseAnthropicRequest,
  renderResponse: renderAnthropicResponse,
  createStreamRenderer: createAnthropicStreamRenderer,
};
