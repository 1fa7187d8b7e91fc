/**
 * A turn's outcome as its run records it: every tool call with its result,
 * the last visible answer (parsed when the agent has a schema), and the
 * terminal event.
 */
import type { Knex } from 'knex';
import type { Db } from '../../core/db/knex.js';
import { isTerminal, type DbRun } from '../../core/db/tables/index.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { FinishTurnArgs } from '../../workflows/session.definitions.js';
import { messageText } from './context.js';
import { validateStructured } from './structured-output.js';
import { emitRunWebhooks, runEventOf } from '../webhooks/run-webhooks.js';
import type { TurnPlan } from './types.js';

/** The run's tool calls with their results, and its last visible answer. */
export async function runCalls(
  db: Db,
  runId: string,
  trx?: Knex.Transaction,
): Promise<{ toolCalls: Array<Record<string, unknown>>; lastAnswer: string | undefined }> {
  const messages = await new StepMessagesRepository(db).ofRun(runId, trx);
  // Results by step and call id: a provider may reuse call ids across steps.
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.step_key, m] as const));
  const toolCalls = messages
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => {
      const step = (m.step_key ?? '').split('.')[0];
      return (m.tool_calls ?? []).map((c) => {
        const r = results.get(`${step}.tool.${c.id}`);
        return {
          id: c.id,
          name: c.name,
          arguments: c.arguments,
          step: Number(step),
          ...(r ? { output: messageText(r.content), is_error: Boolean(r.metadata?.is_error) } : {}),
        };
      });
    });
  const last = messages.filter((m) => m.role === 'assistant' && !m.hidden).at(-1);
  return { toolCalls, lastAnswer: last ? messageText(last.content) : undefined };
}

/** A completed run's output: its last visible answer, with the parsed value when it matches the schema. */
function completedOutput(plan: TurnPlan | null, lastAnswer: string | undefined): DbRun['output'] {
  const content = lastAnswer ?? '';
  const output: NonNullable<DbRun['output']> = { role: 'assistant', content };
  if (plan?.schema) {
    const checked = validateStructured(plan.schema.schema, content);
    if (checked.ok) output.structured = checked.value;
  }
  return output;
}

/**
 * The run's outcome and its terminal event, in one transaction: status,
 * output, every tool call with its result, usage. No-op on a finished run.
 * True when this call closed it.
 */
export async function closeRun(db: Db, args: FinishTurnArgs): Promise<boolean> {
  const turns = new TurnsRepository(db);
  const events = new RunEventsRepository(db);
  const closed = await turns.transaction(async (trx) => {
    const run = await turns.lock(args.runId, trx);
    if (!run || isTerminal(run.status)) return undefined;
    const plan = run.plan as unknown as TurnPlan | null;
    const { toolCalls, lastAnswer } = await runCalls(db, run.id, trx);
    const output = args.status === 'completed' ? completedOutput(plan, lastAnswer) : null;
    await turns.close(run.id, { status: args.status, output, toolCalls, error: args.error }, trx);
    // What its calls held against budgets is spent now, or given back.
    await new BudgetsRepository(db).release(run.id, undefined, trx);
    if (args.status === 'completed')
      await events.append(
        run.id,
        'run.completed',
        { status: 'completed', usage: run.usage, output },
        'final',
        trx,
      );
    else
      await events.append(
        run.id,
        'run.failed',
        { status: 'failed', error: args.error, usage: run.usage },
        'final',
        trx,
      );
    return run;
  });
  // After the commit: a rolled-back close is not a turn's end.
  if (closed) metrics().session.turnEnded(args.status, closed.created_at, args.error?.code);
  // Also when a retry finds the run closed already: its deliveries may not have been recorded yet.
  const event = runEventOf(args.status);
  if (event) await emitRunWebhooks(db, args.runId, event, 'final');
  return closed !== undefined;
}
