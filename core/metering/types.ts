/** The vocabulary of metering: keys with limits, a call's admission, and what settling it charges. */
import type { BudgetPeriod } from '../repositories/metering.repository.js';
import type { Lease } from './leases.js';
import type { Price } from './pricing.js';
import type { ProvisionalUsage } from './usage-writer.js';

export interface RateLimit {
  requests_per_minute?: number;
  tokens_per_minute?: number;
}
export interface Budget {
  max_usd: number;
  period: BudgetPeriod;
}

/** What metering needs of a virtual key. */
export interface MeteredKey {
  id: string;
  rate_limit: RateLimit | null;
  budget: Budget | null;
}

/** A call as admission sees it: who is called, and the most it can use. */
export interface AdmitRequest {
  providerId: string;
  providerName: string;
  model: string;
  /** Estimated prompt tokens (from the request: see estimateInputTokens). */
  inputTokens: number;
  /** The caller's output limit per choice; undefined when it set none (the model's ceiling applies). */
  maxOutputTokens: number | undefined;
  /** Choices the vendor writes and bills (OpenAI's `n`, Gemini's `candidateCount`); 1 when absent. */
  choices?: number | undefined;
}

/** What is known of a model for metering: its price and output ceiling (a Model resource's, else the shipped tables'). */
export interface ModelLimits {
  price: Price | undefined;
  maxOutputTokens: number | undefined;
}

/** An admitted call: what it reserved, handed back to settle. */
export interface Admission {
  key: MeteredKey;
  request: AdmitRequest;
  price: Price | undefined;
  /** The most output tokens the vendor can bill for the call (core/metering/reservation.ts). */
  reservedOutputTokens: number;
  windowStart: Date | undefined;
  periodStart: Date | undefined;
  reservedUsd: number;
  /** Tokens the call holds in the key's minute window while in flight (estimated input + reserved output). */
  reservedTokens: number;
  /** The replica's lease the call was admitted on (leases enabled), instead of windowStart/periodStart. */
  lease?: Lease;
  startedAt: number;
  /** The call's usage row, stored while it goes upstream (startUsage), completed by settle. */
  provisional?: ProvisionalUsage;
}

/**
 * A call no key meters (an agent turn in a project without a virtual key):
 * nothing limits or reserves it, but it is priced like any other and its
 * usage row is written, under no key.
 */
export interface KeylessCall {
  key: undefined;
  request: AdmitRequest;
  price: Price | undefined;
  startedAt: number;
}

/** What a settled call is charged: the tokens it used, and how it ended. */
export interface Charge {
  /** Every prompt token, cache reads and writes included (see core/llm/types.ts Usage). */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, read from and written to the provider's prompt cache (charged at the cache rates). */
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  status: number;
  traceId?: string;
}

/**
 * What a settle charged and promises: the call's cost (0 when no price is
 * known), the usage row written (`logged`), and everything, counters
 * included (`settled`).
 */
export interface Settlement {
  costUsd: number;
  logged: Promise<void>;
  settled: Promise<{ costUsd: number }>;
}
