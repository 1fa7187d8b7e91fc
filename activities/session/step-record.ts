/**
 * A model step's answer as Postgres records it, in one statement
 * (`storeStep`): the assistant message, the run's usage and cost (and, for the final
 * answer, its completion), the corrective message of an invalid structured
 * answer, and the events readers have not been sent yet, in order.
 */
import type { DbRun } from '../../core/db/tables/index.js';
import { RunEventsRepository, type StepEvent } from '../../core/repositories/run-events.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { ModelStepResult } from '../../workflows/session.definitions.js';
import type { StreamedAnswer } from './model-stream.js';
import { runCalls } from './run-outcome.js';
import { validateStructured } from './structured-output.js';
import type { SessionDeps, TurnPlan } from './types.js';
import { emitRunWebhooks } from '../webhooks/run-webhooks.js';

export interface RecordedStep {
  run: DbRun;
  step: number;
  plan: TurnPlan;
  answer: StreamedAnswer;
  result: ModelStepResult;
}

type Structured = ReturnType<typeof validateStructured> | undefined;

/** The step's events after the deltas: its message, its tool calls, and the run's end when the answer is final. */
function stepEvents(s: RecordedStep, structured: Structured, output: DbRun['output']): StepEvent[] {
  const { step, answer, result } = s;
  // What readers have not been sent yet goes out with the answer, in order.
  const events: StepEvent[] = [...answer.pendingDeltas];
  events.push({
    type: 'message.completed',
    data: {
      step,
      role: 'assistant',
      content: answer.text,
      ...(answer.toolCalls.length ? { tool_calls: answer.toolCalls } : {}),
      ...(structured?.ok ? { structured: structured.value } : {}),
      ...(result.kind === 'invalid_output' ? { invalid: true, errors: result.errors } : {}),
    },
    key: `${step}.completed`,
  });
  for (const call of answer.toolCalls)
    events.push({
      type: 'tool_call.created',
      data: { step, id: call.id, name: call.name, arguments: call.arguments },
      key: `${step}.tool.${call.id}.created`,
    });
  // Readers learn of the end with the answer: same statement.
  if (result.kind === 'final')
    events.push({ type: 'run.completed', data: { status: 'completed', output }, key: 'final' });
  return events;
}

export async function recordStep(deps: SessionDeps, s: RecordedStep): Promise<void> {
  const { run, step, plan, answer, result } = s;
  const final = result.kind === 'final';
  const structured =
    plan.schema && final && !answer.toolCalls.length
      ? validateStructured(plan.schema.schema, answer.text)
      : undefined;
  const output: DbRun['output'] = final
    ? { role: 'assistant', content: answer.text, ...(structured?.ok ? { structured: structured.value } : {}) }
    : null;
  const turnCalls = final && step > 1 ? (await runCalls(deps.db, run.id)).toolCalls : [];
  const used = answer.usage ?? { input_tokens: 0, output_tokens: 0 };
  const stored = await new RunEventsRepository(deps.db).storeStep({
    runId: run.id,
    threadId: plan.thread_id,
    stepKey: `${step}.assistant`,
    message: {
      content: answer.text,
      tool_calls: answer.toolCalls.length ? answer.toolCalls : null,
      usage: used,
      prompt_version_id: plan.prompt_version_id,
      trace_id: run.trace_id,
      hidden: result.kind === 'invalid_output',
      metadata: { step, finish_reason: answer.finish, model: plan.model.model_id },
    },
    usage: used,
    costUsd: answer.costUsd,
    reported: answer.usage !== undefined,
    final: final ? { output, toolCalls: turnCalls } : undefined,
    correction:
      result.kind === 'invalid_output'
        ? {
            stepKey: `${step}.correction`,
            content: `Your answer does not match the required JSON schema: ${result.errors.join('; ')}. Answer again with only JSON that matches the schema.`,
          }
        : undefined,
    events: stepEvents(s, structured, output),
  });
  // Counted by the statement that stored the answer: a retry that finds it stored counts nothing.
  if (stored !== undefined && final) metrics().session.turnEnded('completed', run.created_at);
  // Also on a retry that finds the answer stored: its deliveries may not have been recorded yet.
  if (final) await emitRunWebhooks(deps.db, run.id, 'run.completed', 'final');
}
