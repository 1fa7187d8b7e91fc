/** What the model is sent: the agent's model parameters, the plan's prompt and schema, the turn's context. */
import type { LlmRequest, ToolDefinition } from '../../core/llm/types.js';
import type { ThreadSummary } from '../../core/repositories/thread-history.repository.js';
import { selectHistory, toLlmMessages, type StoredMessage } from './context.js';
import type { TurnPlan } from './types.js';

/** Model parameters (Model resource `parameters`) that map onto a request. */
export function requestParameters(params: Record<string, unknown>): Partial<LlmRequest> {
  const out: Partial<LlmRequest> = {};
  if (typeof params.temperature === 'number') out.temperature = params.temperature;
  if (typeof params.top_p === 'number') out.top_p = params.top_p;
  if (typeof params.max_tokens === 'number') out.max_tokens = params.max_tokens;
  if (Array.isArray(params.stop)) out.stop = params.stop.filter((s): s is string => typeof s === 'string');
  return out;
}

/** One model call of the turn: the thread as this step sees it (see context.ts), the tools offered, the schema. */
export function turnRequest(
  plan: TurnPlan,
  runId: string,
  rows: StoredMessage[],
  summary: ThreadSummary | undefined,
  offered: ToolDefinition[],
): LlmRequest {
  const history = selectHistory(rows, {
    currentRunId: runId,
    enableHistory: plan.enable_history,
    summarizer: plan.summarizer_type,
    ...(plan.sliding_window_keep_count ? { keepTurns: plan.sliding_window_keep_count } : {}),
    ...(summary ? { summaryThroughSeq: summary.through_seq } : {}),
  });
  return {
    model: plan.model.model_id,
    ...requestParameters(plan.model.parameters),
    ...(plan.system ? { system: plan.system } : {}),
    ...(summary ? { extra_system: [`Summary of the earlier conversation:\n${summary.content}`] } : {}),
    messages: toLlmMessages(history),
    ...(offered.length ? { tools: offered } : {}),
    ...(plan.schema
      ? {
          response_format: {
            type: 'json_schema' as const,
            name: plan.schema.name,
            schema: plan.schema.schema,
          },
        }
      : {}),
  };
}
