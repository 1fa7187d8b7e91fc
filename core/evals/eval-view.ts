/**
 * An eval as the API shows it and the `eval.completed` webhook sends it:
 * progress, per-variant totals and the thresholds' verdict, computed from its
 * per-turn results. Shared by the API and the worker (which sends the
 * webhook), so both say the same.
 */
import type { DbEval, DbEvalResult, EvalStatus, EvalThresholds, EvalVariant } from '../db/tables/evals.js';

export interface VariantTotals {
  variant: string;
  /** Result rows: every planned turn once written (skipped ones included). */
  turns: number;
  completed: number;
  failed: number;
  diverged: number;
  skipped: number;
  /** Exact matches over every turn of the variant (a turn not answered does not match); null without turns. */
  exact_match_rate: number | null;
  /** Of the answers checked against the agent's output schema, the share that matched it; null without a schema. */
  schema_valid_rate: number | null;
  /** Mean of the judge's scores (0 to 1) over the turns it scored; null without a judge or scores. */
  mean_judge_score: number | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** What the recorded turns the variant answered cost; null for a dataset or when none was priced. */
  original_cost_usd: number | null;
  /** cost_usd / original_cost_usd over the turns both answered with a price; null when unknown. */
  cost_ratio: number | null;
  /** Mean per-turn latency (run start to end) of the variant's answered turns. */
  mean_latency_ms: number | null;
  original_mean_latency_ms: number | null;
  /** What the judge's own model calls cost. */
  judge_cost_usd: number;
  /** This variant against the thresholds; null when the eval has none or has not completed. */
  passed: boolean | null;
  /** Each threshold the variant missed, in words. */
  failures: string[];
}

export interface EvalView {
  id: string;
  project_id: string;
  /** Null once the agent was deleted. */
  agent_id: string | null;
  status: EvalStatus;
  conversation_ids: string[] | null;
  dataset_id: string | null;
  variants: EvalVariant[];
  concurrency: number;
  judge: DbEval['judge'];
  thresholds: EvalThresholds | null;
  execute_diverged_tools: boolean;
  progress: { turns_total: number | null; turns_done: number };
  totals: VariantTotals[];
  /** Every variant met every threshold; null while running, without thresholds, or when not completed. */
  passed: boolean | null;
  error: DbEval['error'];
  workflow_id: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const round = (x: number | null, digits = 6): number | null =>
  x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits;

/** The thresholds the variant misses (empty: it passes). */
function missed(t: VariantTotals, thresholds: EvalThresholds): string[] {
  const out: string[] = [];
  const { min_exact_match_rate: minMatch, min_judge_score: minJudge, max_cost_ratio: maxCost } = thresholds;
  if (minMatch !== undefined && (t.exact_match_rate ?? 0) < minMatch)
    out.push(`exact_match_rate ${t.exact_match_rate ?? 'n/a'} is below ${minMatch}`);
  if (minJudge !== undefined && (t.mean_judge_score === null || t.mean_judge_score < minJudge))
    out.push(`mean_judge_score ${t.mean_judge_score ?? 'n/a'} is below ${minJudge}`);
  if (maxCost !== undefined && (t.cost_ratio === null || t.cost_ratio > maxCost))
    out.push(`cost_ratio ${t.cost_ratio ?? 'n/a'} is above ${maxCost}`);
  return out;
}

function variantTotals(
  variant: EvalVariant,
  rows: DbEvalResult[],
): Omit<VariantTotals, 'passed' | 'failures'> {
  const count = (s: DbEvalResult['status']) => rows.filter((r) => r.status === s).length;
  const answered = rows.filter((r) => r.status === 'completed');
  const checked = rows.filter((r) => r.schema_valid !== null);
  const scored = rows.filter((r) => r.judge_score !== null).map((r) => r.judge_score!);
  const cost = (r: DbEvalResult) => (r.cost_usd === null ? 0 : Number(r.cost_usd));
  const priced = answered.filter((r) => r.original?.cost_usd !== null && r.original?.cost_usd !== undefined);
  const originalCost = priced.length ? sum(priced.map((r) => r.original!.cost_usd!)) : null;
  const pricedCost = sum(priced.map(cost));
  const originals = answered
    .filter((r) => r.original?.latency_ms != null)
    .map((r) => r.original!.latency_ms!);
  return {
    variant: variant.name,
    turns: rows.length,
    completed: answered.length,
    failed: count('failed'),
    diverged: count('diverged'),
    skipped: count('skipped'),
    exact_match_rate: rows.length ? round(rows.filter((r) => r.exact_match).length / rows.length) : null,
    schema_valid_rate: checked.length
      ? round(checked.filter((r) => r.schema_valid).length / checked.length)
      : null,
    mean_judge_score: round(mean(scored)),
    input_tokens: sum(rows.map((r) => r.input_tokens ?? 0)),
    output_tokens: sum(rows.map((r) => r.output_tokens ?? 0)),
    cost_usd: round(sum(rows.map(cost)), 10)!,
    original_cost_usd: round(originalCost, 10),
    cost_ratio: originalCost ? round(pricedCost / originalCost) : null,
    mean_latency_ms: round(mean(answered.filter((r) => r.latency_ms !== null).map((r) => r.latency_ms!)), 1),
    original_mean_latency_ms: round(mean(originals), 1),
    judge_cost_usd: round(sum(rows.map((r) => r.judge_usage?.cost_usd ?? 0)), 10)!,
  };
}

export function evalView(row: DbEval, results: DbEvalResult[]): EvalView {
  const judged = row.status === 'completed' && row.thresholds && Object.keys(row.thresholds).length > 0;
  const totals = row.variants.map((v, i): VariantTotals => {
    const t = variantTotals(
      v,
      results.filter((r) => r.variant_index === i),
    );
    const failures = judged ? missed({ ...t, passed: null, failures: [] }, row.thresholds!) : [];
    return { ...t, passed: judged ? failures.length === 0 : null, failures };
  });
  const planned = row.plan ? sum(row.plan.map((c) => c.turns)) * row.variants.length : null;
  return {
    id: row.id,
    project_id: row.project_id,
    agent_id: row.agent_id,
    status: row.status,
    conversation_ids: row.conversation_ids,
    dataset_id: row.dataset_id,
    variants: row.variants,
    concurrency: row.concurrency,
    judge: row.judge,
    thresholds: row.thresholds,
    execute_diverged_tools: row.execute_diverged_tools,
    progress: { turns_total: planned, turns_done: results.length },
    totals,
    passed: judged ? totals.every((t) => t.passed) : null,
    error: row.error,
    workflow_id: row.workflow_id,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
