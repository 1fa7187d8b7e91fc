import type { ProviderFormat } from '../../../core/llm/types.js';
import type { Surface } from '../surface.js';
import { anthropicSurface } from './anthropic/index.js';
import { geminiSurface } from './gemini/index.js';
import { openaiSurface } from './openai/index.js';
import { responsesErrorBody } from './responses/errors.js';

export const SURFACES: Record<ProviderFormat, Surface> = {
  openai: openaiSurface,
  anthropic: anthropicSurface,
  gemini: geminiSurface,
};

/** Errors of the Responses API: OpenAI's shape, with its codes for a missing response. */
const responsesErrors: Surface = { ...openaiSurface, errorBody: responsesErrorBody };

/** Which surface a gateway path belongs to; other /api/gateway/ paths answer in OpenAI's shape. */
export function surfaceOfPath(path: string): Surface {
  const p = path.toLowerCase();
  if (p.startsWith('/api/gateway/openai/v1/responses')) return responsesErrors;
  if (p.startsWith('/api/gateway/anthropic/')) return anthropicSurface;
  if (p.startsWith('/api/gateway/gemini/')) return geminiSurface;
  return openaiSurface;
}
