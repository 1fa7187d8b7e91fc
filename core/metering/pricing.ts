import type { Usage } from '../llm/types.js';

/**
 * USD per million tokens. The cache rates are optional: without one, cache
 * reads (or writes) are charged at the input price, which never undercharges
 * a budget for reads; an Anthropic cache write costs more than an input
 * token, so a model used with `cache_control` should have its write rate set.
 */
export interface Price {
  input_per_million_usd: number;
  output_per_million_usd: number;
  cache_read_per_million_usd?: number;
  cache_write_per_million_usd?: number;
}

/**
 * Anthropic's cache rates: reads 0.1× the input price, writes 1.25× (the
 * default 5-minute TTL; a 1-hour breakpoint's writes cost 2×, which a
 * Model's `pricing` must say if callers use `ttl: '1h'`).
 */
const anthropic = (input: number, output: number): Price => ({
  input_per_million_usd: input,
  output_per_million_usd: output,
  cache_read_per_million_usd: Math.round(input * 0.1 * 1e6) / 1e6,
  cache_write_per_million_usd: Math.round(input * 1.25 * 1e6) / 1e6,
});

/** OpenAI's cached input (its own prefix caching, no write surcharge on these models). */
const openai = (input: number, output: number, cachedInput: number): Price => ({
  input_per_million_usd: input,
  output_per_million_usd: output,
  cache_read_per_million_usd: cachedInput,
});

/**
 * Shipped list prices of common models (USD per million tokens, standard
 * tier), matched by the longest prefix of the model id. A Model resource's
 * `pricing` overrides them; models not listed cost what their Model says, or
 * nothing is known (a key with a budget then refuses them).
 */
export const DEFAULT_PRICES: Record<string, Price> = {
  'gpt-4o-mini': openai(0.15, 0.6, 0.075),
  'gpt-4o': openai(2.5, 10, 1.25),
  'gpt-4.1-nano': openai(0.1, 0.4, 0.025),
  'gpt-4.1-mini': openai(0.4, 1.6, 0.1),
  'gpt-4.1': openai(2, 8, 0.5),
  'gpt-4-turbo': { input_per_million_usd: 10, output_per_million_usd: 30 },
  'gpt-3.5-turbo': { input_per_million_usd: 0.5, output_per_million_usd: 1.5 },
  'o1-mini': openai(1.1, 4.4, 0.55),
  o1: openai(15, 60, 7.5),
  'o3-mini': openai(1.1, 4.4, 0.55),
  'o4-mini': openai(1.1, 4.4, 0.275),
  'text-embedding-3-small': { input_per_million_usd: 0.02, output_per_million_usd: 0 },
  'text-embedding-3-large': { input_per_million_usd: 0.13, output_per_million_usd: 0 },
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-haiku': anthropic(0.25, 1.25),
  'claude-3-5-sonnet': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-opus': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  'claude-haiku-4': anthropic(1, 5),
  'gemini-1.5-flash': { input_per_million_usd: 0.075, output_per_million_usd: 0.3 },
  'gemini-1.5-pro': { input_per_million_usd: 1.25, output_per_million_usd: 5 },
  'gemini-2.0-flash': { input_per_million_usd: 0.1, output_per_million_usd: 0.4 },
  'gemini-2.5-flash': { input_per_million_usd: 0.3, output_per_million_usd: 2.5 },
  'gemini-2.5-pro': { input_per_million_usd: 1.25, output_per_million_usd: 10 },
  'text-embedding-004': { input_per_million_usd: 0, output_per_million_usd: 0 },
};

/**
 * The most output tokens each shipped model writes in one answer (one choice),
 * whatever the caller asks: a call that sets no limit is reserved at this
 * (the vendor may write that much). Matched like the prices; the largest
 * figure a vendor documents, beta headers included (Claude 3.7 Sonnet's
 * 128k output), so a reservation never falls short. A Model resource's
 * `max_output_tokens` overrides it.
 */
export const DEFAULT_OUTPUT_CEILINGS: Record<string, number> = {
  'gpt-4o-mini': 16_384,
  'gpt-4o': 16_384,
  'gpt-4.1-nano': 32_768,
  'gpt-4.1-mini': 32_768,
  'gpt-4.1': 32_768,
  'gpt-4-turbo': 4_096,
  'gpt-3.5-turbo': 4_096,
  'o1-mini': 65_536,
  o1: 100_000,
  'o3-mini': 100_000,
  'o4-mini': 100_000,
  'text-embedding-3-small': 0,
  'text-embedding-3-large': 0,
  'claude-3-5-haiku': 8_192,
  'claude-3-haiku': 4_096,
  'claude-3-5-sonnet': 8_192,
  'claude-3-7-sonnet': 128_000,
  'claude-sonnet-4': 64_000,
  'claude-3-opus': 4_096,
  'claude-opus-4': 32_000,
  'claude-haiku-4': 64_000,
  'gemini-1.5-flash': 8_192,
  'gemini-1.5-pro': 8_192,
  'gemini-2.0-flash': 8_192,
  'gemini-2.5-flash': 65_536,
  'gemini-2.5-pro': 65_536,
  'text-embedding-004': 0,
};

/** The entry of `table` whose key is the longest prefix of the model id (`models/` and case ignored). */
function byLongestPrefix<T>(table: Record<string, T>, model: string): T | undefined {
  const id = model.replace(/^models\//, '').toLowerCase();
  let best: string | undefined;
  for (const prefix of Object.keys(table)) {
    if (id.startsWith(prefix) && (!best || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : table[best];
}

export function defaultPrice(model: string): Price | undefined {
  return byLongestPrefix(DEFAULT_PRICES, model);
}

export function defaultOutputCeiling(model: string): number | undefined {
  return byLongestPrefix(DEFAULT_OUTPUT_CEILINGS, model);
}

/**
 * What a call costs: uncached input at the input price, cache reads and
 * writes at their rates (the input price when the price has none), output
 * at the output price. `usage.input_tokens` counts every prompt token (see Usage).
 */
export function costUsd(price: Price, usage: Usage): number {
  const read = usage.cache_read_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const uncached = Math.max(0, usage.input_tokens - read - write);
  const input = price.input_per_million_usd;
  return (
    (uncached * input +
      read * (price.cache_read_per_million_usd ?? input) +
      write * (price.cache_write_per_million_usd ?? input) +
      usage.output_tokens * price.output_per_million_usd) /
    1_000_000
  );
}

/**
 * The most `inputTokens` prompt tokens can cost before the call says how many
 * were cache writes: at the dearer of the input and cache-write prices, so a
 * reservation never falls short of the charge on account of caching.
 */
export function worstCaseCostUsd(price: Price, inputTokens: number, outputTokens: number): number {
  const input = Math.max(price.input_per_million_usd, price.cache_write_per_million_usd ?? 0);
  return (inputTokens * input + outputTokens * price.output_per_million_usd) / 1_000_000;
}
