/** USD per million tokens. */
export interface Price {
  input_per_million_usd: number;
  output_per_million_usd: number;
}

/**
 * Shipped list prices of common models (USD per million tokens, standard
 * tier), matched by the longest prefix of the model id. A Model resource's
 * `pricing` overrides them; models not listed cost what their Model says, or
 * nothing is known (a key with a budget then refuses them).
 */
export const DEFAULT_PRICES: Record<string, Price> = {
  'gpt-4o-mini': { input_per_million_usd: 0.15, output_per_million_usd: 0.6 },
  'gpt-4o': { input_per_million_usd: 2.5, output_per_million_usd: 10 },
  'gpt-4.1-nano': { input_per_million_usd: 0.1, output_per_million_usd: 0.4 },
  'gpt-4.1-mini': { input_per_million_usd: 0.4, output_per_million_usd: 1.6 },
  'gpt-4.1': { input_per_million_usd: 2, output_per_million_usd: 8 },
  'gpt-4-turbo': { input_per_million_usd: 10, output_per_million_usd: 30 },
  'gpt-3.5-turbo': { input_per_million_usd: 0.5, output_per_million_usd: 1.5 },
  'o1-mini': { input_per_million_usd: 1.1, output_per_million_usd: 4.4 },
  o1: { input_per_million_usd: 15, output_per_million_usd: 60 },
  'o3-mini': { input_per_million_usd: 1.1, output_per_million_usd: 4.4 },
  'o4-mini': { input_per_million_usd: 1.1, output_per_million_usd: 4.4 },
  'text-embedding-3-small': { input_per_million_usd: 0.02, output_per_million_usd: 0 },
  'text-embedding-3-large': { input_per_million_usd: 0.13, output_per_million_usd: 0 },
  'claude-3-5-haiku': { input_per_million_usd: 0.8, output_per_million_usd: 4 },
  'claude-3-haiku': { input_per_million_usd: 0.25, output_per_million_usd: 1.25 },
  'claude-3-5-sonnet': { input_per_million_usd: 3, output_per_million_usd: 15 },
  'claude-3-7-sonnet': { input_per_million_usd: 3, output_per_million_usd: 15 },
  'claude-sonnet-4': { input_per_million_usd: 3, output_per_million_usd: 15 },
  'claude-3-opus': { input_per_million_usd: 15, output_per_million_usd: 75 },
  'claude-opus-4': { input_per_million_usd: 15, output_per_million_usd: 75 },
  'claude-haiku-4': { input_per_million_usd: 1, output_per_million_usd: 5 },
  'gemini-1.5-flash': { input_per_million_usd: 0.075, output_per_million_usd: 0.3 },
  'gemini-1.5-pro': { input_per_million_usd: 1.25, output_per_million_usd: 5 },
  'gemini-2.0-flash': { input_per_million_usd: 0.1, output_per_million_usd: 0.4 },
  'gemini-2.5-flash': { input_per_million_usd: 0.3, output_per_million_usd: 2.5 },
  'gemini-2.5-pro': { input_per_million_usd: 1.25, output_per_million_usd: 10 },
  'text-embedding-004': { input_per_million_usd: 0, output_per_million_usd: 0 },
};

export function defaultPrice(model: string): Price | undefined {
  const id = model.replace(/^models\//, '').toLowerCase();
  let best: string | undefined;
  for (const prefix of Object.keys(DEFAULT_PRICES)) {
    if (id.startsWith(prefix) && (!best || prefix.length > best.length)) best = prefix;
  }
  return best ? DEFAULT_PRICES[best] : undefined;
}

export function costUsd(price: Price, inputTokens: number, outputTokens: number): number {
  return (
    (inputTokens * price.input_per_million_usd + outputTokens * price.output_per_million_usd) / 1_000_000
  );
}
