import type { Usage } from './types.js';

/**
 * A Usage whose cache counts are set only when non-zero, so a call without
 * prompt caching reads exactly as before. `input` is every prompt token
 * (see Usage).
 */
export function usageWithCache(input: number, output: number, cacheRead = 0, cacheWrite = 0): Usage {
  const u: Usage = { input_tokens: input, output_tokens: output };
  if (cacheRead > 0) u.cache_read_tokens = cacheRead;
  if (cacheWrite > 0) u.cache_write_tokens = cacheWrite;
  return u;
}

/** Prompt tokens neither read from nor written to a cache (Anthropic's own `input_tokens`). */
export function uncachedInputTokens(u: Usage): number {
  return Math.max(0, u.input_tokens - (u.cache_read_tokens ?? 0) - (u.cache_write_tokens ?? 0));
}
