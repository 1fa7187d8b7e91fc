import Joi from 'joi';
import type { EvalJudge, EvalThresholds } from '../../core/db/tables/evals.js';
import {
  idParams,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';
import { modelCreate } from './models.schemas.js';

export type { EvalView, VariantTotals } from '../../core/evals/eval-view.js';

/** The most conversations (or variants) one eval takes. */
export const MAX_EVAL_CONVERSATIONS = 1000;
export const MAX_EVAL_VARIANTS = 10;
export const MAX_EVAL_CONCURRENCY = 50;

const modelParameters = modelCreate.body.extract('parameters') as Joi.ObjectSchema;

const variant = Joi.object({
  name: name.required().description('Unique within the eval: its totals and results are named by it'),
  prompt_version: Joi.number()
    .integer()
    .min(1)
    .description(
      "A version (the integer) of the agent's prompt; neither this nor prompt_label: the agent's own",
    ),
  prompt_label: Joi.string()
    .trim()
    .min(1)
    .max(100)
    .description("A label of the agent's prompt (its version when the eval is created)"),
  model_id: uuid.description("A model of the project instead of the agent's"),
  parameters: modelParameters.description("Model parameters, merged over the model's own `parameters`"),
})
  .oxor('prompt_version', 'prompt_label')
  .description('One configuration to replay the turns against');

const thresholds = Joi.object({
  min_exact_match_rate: Joi.number().min(0).max(1),
  min_judge_score: Joi.number().min(0).max(1),
  max_cost_ratio: Joi.number().min(0),
}).description('Every variant must meet every threshold for the eval to pass (`passed`)');

export const evalCreate = {
  query: Joi.object({ ...projectQuery }),
  body: Joi.object({
    agent_id: uuid
      .required()
      .description('The agent whose recorded turns are replayed (or who answers the rows)'),
    conversation_ids: Joi.array()
      .items(Joi.string().min(1).max(200))
      .min(1)
      .max(MAX_EVAL_CONVERSATIONS)
      .unique()
      .description('Recorded conversations (their ids) in which the agent spoke; each user turn is replayed'),
    dataset_id: uuid.description(
      'A dataset of the project: each row is one user turn in a fresh conversation',
    ),
    variants: Joi.array().items(variant).min(1).max(MAX_EVAL_VARIANTS).unique('name').required(),
    concurrency: Joi.number()
      .integer()
      .min(1)
      .max(MAX_EVAL_CONCURRENCY)
      .default(4)
      .description('How many conversation × variant replays run at once (default 4)'),
    judge: Joi.object({
      model_id: uuid.required(),
      prompt_id: uuid
        .required()
        .description(
          "Its latest version is the judge's system prompt; `{{user_message}}`, `{{original_answer}}` and `{{variant_answer}}` are filled",
        ),
    }).description('Scores each answered turn from 0 to 1 with a reason (structured output)'),
    thresholds,
    execute_diverged_tools: Joi.boolean()
      .default(false)
      .description(
        "A sandbox command the recording does not answer runs in the scratch conversation's own sandbox instead of stopping the replay (MCP calls never run)",
      ),
  })
    .xor('conversation_ids', 'dataset_id')
    .required(),
};

export const evalList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const evalGet = { params: idParams, query: Joi.object({ ...optionalProjectQuery }) };
export const evalResults = { params: idParams, query: Joi.object({ ...optionalProjectQuery }) };
export const evalCancel = { params: idParams, query: Joi.object({ ...optionalProjectQuery }) };

export interface EvalVariantBody {
  name: string;
  prompt_version?: number;
  prompt_label?: string;
  model_id?: string;
  parameters?: Record<string, unknown>;
}

export interface EvalCreateBody {
  agent_id: string;
  conversation_ids?: string[];
  dataset_id?: string;
  variants: EvalVariantBody[];
  concurrency: number;
  judge?: EvalJudge;
  thresholds?: EvalThresholds;
  execute_diverged_tools: boolean;
}

/** One per-turn row of GET /evals/{id}/results. */
export interface EvalResultView {
  variant: string;
  case_index: number;
  turn_index: number;
  /** The recorded conversation's id, or the dataset row's. */
  case_key: string;
  status: string;
  input: unknown;
  expected: unknown;
  original: unknown;
  run_id: string | null;
  conversation_id: string;
  output: string | null;
  structured: unknown;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  latency_ms: number | null;
  exact_match: boolean | null;
  schema_valid: boolean | null;
  judge_score: number | null;
  judge_reason: string | null;
  error: { code: string; message: string } | null;
}

const nullableNumber = Joi.number().allow(null);

const variantResponse = Joi.object({
  name: Joi.string(),
  prompt_version_id: uuid.allow(null),
  prompt_version: Joi.number().integer().allow(null),
  prompt_label: Joi.string().allow(null),
  model_id: uuid.allow(null),
  parameters: Joi.object().unknown(true).allow(null),
});

const totalsResponse = Joi.object({
  variant: Joi.string(),
  turns: Joi.number().integer().description('Turns written so far (skipped ones included)'),
  completed: Joi.number().integer(),
  failed: Joi.number().integer(),
  diverged: Joi.number()
    .integer()
    .description('Turns whose tool calls left the recording (the case stopped there)'),
  skipped: Joi.number().integer(),
  exact_match_rate: nullableNumber.description('Exact matches over all turns'),
  schema_valid_rate: nullableNumber,
  mean_judge_score: nullableNumber,
  input_tokens: Joi.number().integer(),
  output_tokens: Joi.number().integer(),
  cost_usd: Joi.number(),
  original_cost_usd: nullableNumber,
  cost_ratio: nullableNumber.description(
    "The variant's cost over the original's, on the turns both answered",
  ),
  mean_latency_ms: nullableNumber,
  original_mean_latency_ms: nullableNumber,
  judge_cost_usd: Joi.number(),
  passed: Joi.boolean().allow(null),
  failures: Joi.array().items(Joi.string()).description('The thresholds this variant missed'),
});

export const evalResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  agent_id: uuid.allow(null).description('Null once the agent was deleted (the eval and its results stay)'),
  status: Joi.string().valid('queued', 'running', 'completed', 'failed', 'cancelled'),
  conversation_ids: Joi.array().items(Joi.string()).allow(null),
  dataset_id: uuid.allow(null),
  variants: Joi.array().items(variantResponse),
  concurrency: Joi.number().integer(),
  judge: Joi.object({ model_id: uuid, prompt_id: uuid }).allow(null),
  thresholds: thresholds.allow(null),
  execute_diverged_tools: Joi.boolean(),
  progress: Joi.object({
    turns_total: Joi.number().integer().allow(null).description('Known once the eval has started'),
    turns_done: Joi.number().integer(),
  }),
  totals: Joi.array().items(totalsResponse),
  passed: Joi.boolean()
    .allow(null)
    .description('Every variant met every threshold; null without thresholds or before completion'),
  error: Joi.object({ code: Joi.string(), message: Joi.string() }).allow(null),
  workflow_id: Joi.string(),
  created_at: timestamp,
  started_at: timestamp.allow(null),
  finished_at: timestamp.allow(null),
});
export const evalListResponse = Joi.array().items(evalResponse);

export const evalResultResponse = Joi.object({
  variant: Joi.string(),
  case_index: Joi.number().integer(),
  turn_index: Joi.number().integer(),
  case_key: Joi.string(),
  status: Joi.string().valid('completed', 'failed', 'diverged', 'skipped'),
  input: Joi.any(),
  expected: Joi.any().description("The original's answer, or the dataset row's expected_output"),
  original: Joi.object({
    run_id: uuid,
    output: Joi.string().allow(null),
    input_tokens: Joi.number().integer(),
    output_tokens: Joi.number().integer(),
    cost_usd: nullableNumber,
    latency_ms: nullableNumber,
  }).allow(null),
  run_id: uuid.allow(null),
  conversation_id: Joi.string().description('The scratch conversation the variant answered in'),
  output: Joi.string().allow(null),
  structured: Joi.any(),
  input_tokens: nullableNumber,
  output_tokens: nullableNumber,
  cost_usd: nullableNumber,
  latency_ms: nullableNumber,
  exact_match: Joi.boolean().allow(null),
  schema_valid: Joi.boolean().allow(null),
  judge_score: nullableNumber,
  judge_reason: Joi.string().allow(null),
  error: Joi.object({ code: Joi.string(), message: Joi.string() }).allow(null),
});
export const evalResultListResponse = Joi.array().items(evalResultResponse);
