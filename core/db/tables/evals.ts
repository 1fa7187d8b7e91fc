import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const EvalsTableName = 'evals';
export const EvalResultsTableName = 'eval_results';

export type EvalStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export const EVAL_TERMINAL: ReadonlySet<EvalStatus> = new Set(['completed', 'failed', 'cancelled']);

/** One variant as stored: the request's, with the prompt version resolved to its id. */
export type EvalVariant = {
  name: string;
  prompt_version_id: string | null;
  prompt_version: number | null;
  prompt_label: string | null;
  model_id: string | null;
  parameters: Record<string, unknown> | null;
};

export type EvalJudge = { model_id: string; prompt_id: string };

export type EvalThresholds = {
  min_exact_match_rate?: number;
  min_judge_score?: number;
  max_cost_ratio?: number;
};

/** One case the workflow replays: a recorded conversation or a dataset row, and its user turns. */
export type EvalCase = {
  key: string;
  turns: number;
  /** A recorded conversation's runs, one per turn, as they were when the eval started. */
  run_ids?: string[];
};

export type DbEval = {
  id: string;
  project_id: string;
  /** Null once the agent was deleted: the eval and its results stay. */
  agent_id: string | null;
  /** The recorded conversations' ids (the client's); null for a dataset eval. */
  conversation_ids: string[] | null;
  dataset_id: string | null;
  variants: EvalVariant[];
  concurrency: number;
  judge: EvalJudge | null;
  thresholds: EvalThresholds | null;
  execute_diverged_tools: boolean;
  status: EvalStatus;
  /** The cases, fixed at the eval's start. */
  plan: EvalCase[] | null;
  error: { code: string; message: string } | null;
  workflow_id: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

export type DbEvalInsert = {
  id: string;
  project_id: string;
  agent_id: string;
  conversation_ids: JsonText | null;
  dataset_id: string | null;
  variants: JsonText;
  concurrency: number;
  judge: JsonText | null;
  thresholds: JsonText | null;
  execute_diverged_tools: boolean;
  workflow_id: string;
};

export type DbEvalUpdate = {
  status?: EvalStatus;
  plan?: JsonText;
  error?: JsonText | null;
  started_at?: Timestamp;
  finished_at?: Timestamp;
};

export type EvalsTable = Knex.CompositeTableType<DbEval, DbEvalInsert, DbEvalUpdate>;

/**
 * completed: answered; failed: the variant's turn failed; diverged: it called
 * a tool differently from the recording (the case stops there); skipped: not
 * run because an earlier turn of its case diverged or failed.
 */
export type EvalResultStatus = 'completed' | 'failed' | 'diverged' | 'skipped';

/** The recorded turn's figures beside the variant's. */
export type EvalOriginal = {
  run_id: string;
  output: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  latency_ms: number | null;
};

export type DbEvalResult = {
  id: string;
  eval_id: string;
  variant_index: number;
  case_index: number;
  turn_index: number;
  case_key: string;
  status: EvalResultStatus;
  input: unknown;
  /** What the answer is compared with: the original's answer, or the row's expected_output. */
  expected: unknown;
  original: EvalOriginal | null;
  run_id: string | null;
  output: string | null;
  structured: unknown;
  input_tokens: number | null;
  output_tokens: number | null;
  /** numeric: text. */
  cost_usd: string | null;
  latency_ms: number | null;
  exact_match: boolean | null;
  schema_valid: boolean | null;
  judge_score: number | null;
  judge_reason: string | null;
  judge_usage: { input_tokens: number; output_tokens: number; cost_usd?: number } | null;
  error: { code: string; message: string } | null;
  created_at: Date;
};

export type DbEvalResultInsert = {
  eval_id: string;
  variant_index: number;
  case_index: number;
  turn_index: number;
  case_key: string;
  status: EvalResultStatus;
  input?: JsonText | null;
  expected?: JsonText | null;
  original?: JsonText | null;
  run_id?: string | null;
  output?: string | null;
  structured?: JsonText | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost_usd?: number | null;
  latency_ms?: number | null;
  exact_match?: boolean | null;
  schema_valid?: boolean | null;
  error?: JsonText | null;
};

export type DbEvalResultUpdate = {
  judge_score?: number | null;
  judge_reason?: string | null;
  judge_usage?: JsonText | null;
};

export type EvalResultsTable = Knex.CompositeTableType<DbEvalResult, DbEvalResultInsert, DbEvalResultUpdate>;

// Registered here rather than in index.ts: the eval tables are only read through their own repository.
declare module 'knex/types/tables.js' {
  interface Tables {
    evals: EvalsTable;
    eval_results: EvalResultsTable;
  }
}
