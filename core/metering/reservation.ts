import { worstCaseCostUsd, type Price } from './pricing.js';

/**
 * A call that sets no output limit, on a model whose ceiling is unknown, is
 * reserved as if it could write this many tokens (only a key without a
 * budget gets that far: see reservedOutputTokens).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/**
 * The most a reservation is counted as, in USD: far above any budget a key
 * may have (so a call reserving more is refused all the same), and within
 * what the ledger's and the usage log's numeric(18, 8) columns hold.
 */
export const MAX_RESERVED_USD = 1e9;

/** What a call asks of the model's output, as the caller sent it. */
export interface OutputAsk {
  model: string;
  /** Its output limit per choice (`max_tokens` and kin); undefined when it set none. */
  maxOutputTokens: number | undefined;
  /** How many choices the vendor writes and bills (OpenAI's `n`, Gemini's `candidateCount`); 1 when absent. */
  choices?: number | undefined;
}

/** Thrown when a budgeted key's call sets no output limit and nothing says how much the model may write (400). */
export class UnknownOutputCeilingError extends Error {
  override name = 'UnknownOutputCeilingError';
  constructor(readonly model: string) {
    super(
      `no output limit is known for model "${model}" and this key has a budget: send max_tokens ` +
        '(max_output_tokens, generationConfig.maxOutputTokens), or set max_output_tokens on a Model resource for it',
    );
  }
}

/**
 * The most output tokens the vendor can bill for the call as sent: its limit
 * per choice (bounded by the model's ceiling, which the vendor never
 * exceeds), or the ceiling when it set none, times its choices. With no
 * ceiling known and no limit set, a budgeted key's call is refused: the
 * vendor would write up to a maximum we cannot bound.
 */
export function reservedOutputTokens(ask: OutputAsk, ceiling: number | undefined, budgeted: boolean): number {
  let perChoice: number;
  if (ask.maxOutputTokens !== undefined)
    perChoice = ceiling === undefined ? ask.maxOutputTokens : Math.min(ask.maxOutputTokens, ceiling);
  else if (ceiling !== undefined) perChoice = ceiling;
  else if (budgeted) throw new UnknownOutputCeilingError(ask.model);
  else perChoice = DEFAULT_MAX_OUTPUT_TOKENS;
  return perChoice * Math.max(1, ask.choices ?? 1);
}

/** The call's worst-case cost, bounded by MAX_RESERVED_USD. */
export function reservedUsd(price: Price | undefined, inputTokens: number, outputTokens: number): number {
  return price ? Math.min(MAX_RESERVED_USD, worstCaseCostUsd(price, inputTokens, outputTokens)) : 0;
}

/** The most tokens one usage row counts in a column (PostgreSQL's integer). */
const MAX_ROW_TOKENS = 2_147_483_647;

/**
 * A token count as a usage row and the counters can store it, whatever a
 * caller asked or an upstream reported (3e9, 1e308, NaN): a whole number
 * from 0 to MAX_ROW_TOKENS. Bounding the count keeps the row: an insert that
 * failed "out of range" would lose the call from usage, and with it every
 * row inserted in the same group.
 */
export function storableTokens(n: number | undefined): number {
  if (n === undefined || Number.isNaN(n)) return 0;
  return Math.min(MAX_ROW_TOKENS, Math.max(0, Math.round(n)));
}

/** A cost as the usage log and the ledger's numeric(18, 8) hold it. */
export function storableUsd(usd: number): number {
  if (Number.isNaN(usd)) return 0;
  return Math.min(MAX_RESERVED_USD, Math.max(0, usd));
}
