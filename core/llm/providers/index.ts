import type { ProviderAdapter } from '../adapter.js';
import type { ProviderFormat } from '../types.js';
import { anthropicAdapter } from './anthropic/index.js';
import { geminiAdapter } from './gemini/index.js';
import { openaiAdapter } from './openai/index.js';

export const ADAPTERS: Record<ProviderFormat, ProviderAdapter> = {
  openai: openaiAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
};
