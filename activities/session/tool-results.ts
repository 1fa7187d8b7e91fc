/**
 * What the tool activities share: their attempts, and storing a call's
 * result once (a retried activity finds the stored result and returns it).
 */
import { activityDefaults } from '../../temporal.config.js';
import type { RunEventsRepository } from '../../core/repositories/run-events.repository.js';

/** Attempts of a tool-call activity (its retry policy); the last one answers the model instead of failing. */
export const TOOL_ATTEMPTS = activityDefaults.toolCall.retry.maximumAttempts;

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export type StoreResult = (
  output: string,
  isError: boolean,
  details?: Record<string, unknown>,
) => Promise<boolean>;

/** Stores this call's result (once; see `RunEventsRepository.storeToolResult`). */
export function resultStore(
  events: RunEventsRepository,
  runId: string,
  threadId: string,
  step: number,
  call: { id: string; name: string },
): StoreResult {
  return (output, isError, details) =>
    events.storeToolResult({ runId, threadId, step, call, output, isError, ...(details ? { details } : {}) });
}
