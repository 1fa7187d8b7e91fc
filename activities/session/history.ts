/**
 * The thread's past as a turn reads it: its messages in session order (see
 * context.ts) and whether the llm summarizer should fold some of them first.
 */
import { isTerminal } from '../../core/db/tables/index.js';
import type { ThreadHistoryRepository } from '../../core/repositories/thread-history.repository.js';
import {
  estimateTokens,
  messageText,
  selectHistory,
  summarizationSlice,
  type StoredMessage,
} from './context.js';
import type { TurnPlan } from './types.js';

/** The thread's messages with their run's place in the session (see context.ts). */
export async function threadMessages(
  history: ThreadHistoryRepository,
  threadId: string,
  currentRunId: string,
): Promise<StoredMessage[]> {
  const rows = await history.messages(threadId);
  return rows.map(({ turn_at, run_status, ...r }) => ({
    ...r,
    // The current turn started after every finished one (its start may not be stored yet).
    ...(r.run_id === currentRunId
      ? { turn_at: Number.MAX_SAFE_INTEGER }
      : turn_at !== null
        ? { turn_at }
        : {}),
    pending: r.run_id !== null && r.run_id !== currentRunId && run_status !== null && !isTerminal(run_status),
  }));
}

/** Whether the thread has grown past the llm summarizer's threshold (and has turns to fold). */
export async function needsSummary(
  history: ThreadHistoryRepository,
  plan: TurnPlan,
  runId: string,
): Promise<boolean> {
  if (!(plan.summarizer_type === 'llm' && plan.enable_history && plan.llm_summarizer_token_threshold))
    return false;
  const lastInputTokens = await history.lastInputTokens(plan.thread_id);
  const rows = await threadMessages(history, plan.thread_id, runId);
  const previous = await history.latestSummary(plan.thread_id);
  const tokens =
    lastInputTokens ??
    estimateTokens([
      plan.system,
      previous?.content,
      ...selectHistory(rows, {
        currentRunId: runId,
        enableHistory: true,
        summarizer: 'llm',
        ...(previous ? { summaryThroughSeq: previous.through_seq } : {}),
      }).map((r) => messageText(r.content)),
    ]);
  return (
    tokens >= plan.llm_summarizer_token_threshold &&
    summarizationSlice(rows, runId, plan.llm_summarizer_keep_recent_count ?? 1, previous?.through_seq) !==
      undefined
  );
}
