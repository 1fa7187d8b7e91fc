/**
 * The eval's judge: its prompt (latest version) receives the user message,
 * the original (or expected) answer and the variant's answer, and answers
 * `{score, reason}` as structured output. Its model call is metered as the
 * turn's are: admitted by the project's virtual key, priced and charged,
 * spanned (the replayed run's plan says which key and session it belongs to).
 */
import { context as otelContext } from '@opentelemetry/api';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { complete } from '../../core/llm/client.js';
import { targetOf } from '../../core/llm/provider-target.js';
import type { LlmRequest, LlmResponse } from '../../core/llm/types.js';
import { renderTemplate } from '../../core/prompts/prompt-template.js';
import { ModelsRepository } from '../../core/repositories/models.repository.js';
import { PromptsRepository } from '../../core/repositories/prompts.repository.js';
import { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import type { EvalJudge } from '../../core/db/tables/evals.js';
import { modelFailure } from '../session/failures.js';
import { startModelCall } from '../session/metered-call.js';
import { requestParameters } from '../session/model-request.js';
import { heartbeating } from '../session/turn-run.js';
import type { SessionDeps, TurnPlan } from '../session/types.js';

/** What the judge is asked to answer. */
export const JUDGE_SCHEMA = {
  type: 'object',
  properties: {
    score: { type: 'number', minimum: 0, maximum: 1, description: '1: as good as the reference, 0: useless' },
    reason: { type: 'string' },
  },
  required: ['score', 'reason'],
  additionalProperties: false,
} as const;

export interface JudgeCase {
  input: string;
  /** The original answer, or the dataset row's expected output. */
  reference: string;
  answer: string;
}

export interface Judgement {
  score: number | null;
  reason: string;
  usage: { input_tokens: number; output_tokens: number; cost_usd?: number } | null;
}

function judgeRequest(
  modelId: string,
  params: Record<string, unknown>,
  system: string,
  c: JudgeCase,
): LlmRequest {
  const text =
    `User message:\n${c.input}\n\nReference answer:\n${c.reference}\n\nCandidate answer:\n${c.answer}\n\n` +
    'Score the candidate answer against the reference from 0 to 1, and say why.';
  return {
    model: modelId,
    ...requestParameters(params),
    system,
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    response_format: { type: 'json_schema', name: 'judgement', schema: JUDGE_SCHEMA },
  };
}

/** The judge's answer read: a score clamped to 0..1, or null with the reason it could not be read. */
function readJudgement(text: string): { score: number | null; reason: string } {
  try {
    const v = JSON.parse(text) as { score?: unknown; reason?: unknown };
    if (typeof v.score !== 'number' || !Number.isFinite(v.score))
      return { score: null, reason: `the judge answered no score: ${text.slice(0, 200)}` };
    return { score: Math.min(1, Math.max(0, v.score)), reason: typeof v.reason === 'string' ? v.reason : '' };
  } catch {
    return { score: null, reason: `the judge's answer is not JSON: ${text.slice(0, 200)}` };
  }
}

/** The judge's system prompt: its latest version, the three texts given as its variables too. */
async function judgeSystem(deps: SessionDeps, promptId: string, c: JudgeCase): Promise<string> {
  const prompts = new PromptsRepository(deps.db);
  const latest = await prompts.maxVersion(deps.db, promptId);
  const version = latest ? await prompts.findVersion(promptId, latest) : undefined;
  if (!version) throw ApplicationFailure.nonRetryable('the judge prompt no longer exists', 'judge_not_found');
  const vars = { user_message: c.input, original_answer: c.reference, variant_answer: c.answer };
  return renderTemplate(version.template, vars).text;
}

/**
 * Asks the judge. A permanent failure (no model, refused by the key, a bad
 * request) is the judgement's reason, with no score; transient trouble
 * throws, for the activity to be retried.
 */
export async function judge(
  deps: SessionDeps,
  plan: TurnPlan,
  j: EvalJudge,
  c: JudgeCase,
): Promise<Judgement> {
  const model = await new ModelsRepository(deps.db).findById(j.model_id);
  const providerId = model ? await new ModelsRepository(deps.db).servingProviderId(model) : undefined;
  const provider = providerId ? await new ProvidersRepository(deps.db).findById(providerId) : undefined;
  if (!model || !provider)
    return { score: null, reason: 'the judge model or its provider no longer exists', usage: null };
  const req = judgeRequest(
    model.model_id,
    model.parameters ?? {},
    await judgeSystem(deps, j.prompt_id, c),
    c,
  );
  let res: LlmResponse;
  const stop = heartbeating();
  try {
    const metered = await startModelCall(deps, plan, provider, req, false);
    try {
      res = await otelContext.with(metered.context(), () =>
        complete(targetOf(provider, deps.secrets), req, Context.current().cancellationSignal),
      );
    } catch (err) {
      await metered.fail(err, 'settling a judge call failed');
      throw modelFailure(err);
    }
    const cost = await metered.end(
      { responseModel: res.model, usage: res.usage, finishReasons: [res.finish_reason] },
      'settling a judge call failed',
    );
    const usage = {
      input_tokens: res.usage.input_tokens,
      output_tokens: res.usage.output_tokens,
      ...(cost !== undefined ? { cost_usd: cost } : {}),
    };
    return { ...readJudgement(res.text), usage };
  } catch (err) {
    if (err instanceof ApplicationFailure && err.nonRetryable)
      return { score: null, reason: `the judge failed: ${err.message}`, usage: null };
    throw err;
  } finally {
    stop();
  }
}
