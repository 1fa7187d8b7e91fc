/**
 * Pure helpers of a turn: what a call that does not run answers, how a
 * failed turn is reported, and the one-line summary of a command.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ApprovalDecision, ToolAnswer, ToolCallPlan } from '../session.definitions.js';

/** The answer a declined call gives the model. */
const DECLINED = 'declined by user';

/** The answer of a call that does not run: invalid, or declined by a person or the approval timeout. */
export function unrunAnswer(
  call: ToolCallPlan,
  decision: ApprovalDecision | undefined,
  approvalTimeoutMs: number | null,
): ToolAnswer {
  if (call.kind === 'invalid')
    return { id: call.id, name: call.name, output: call.error ?? 'invalid tool call', isError: true };
  const output =
    decision!.by === 'timeout'
      ? `${DECLINED}: no decision within the agent's approval timeout (${approvalTimeoutMs} ms)`
      : DECLINED;
  return { id: call.id, name: call.name, output, isError: true };
}

/** The turn's failure when the answer still does not match the schema after the corrective retry. */
export function schemaMismatch(errors: string[]): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `the answer does not match the agent's schema: ${errors.join('; ')}`,
    'schema_validation_failed',
    { errors },
  );
}

/** A command as a one-line activity summary. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** The failure as the run reports it: the application failure's type and message, without Temporal's wrapping. */
export function turnError(err: unknown): { code: string; message: string; details?: unknown } {
  let cause: unknown = err;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0];
    return {
      code: cause.type ?? 'error',
      message: cause.message,
      ...(details !== undefined ? { details } : {}),
    };
  }
  return { code: 'error', message: cause instanceof Error ? cause.message : String(cause) };
}
