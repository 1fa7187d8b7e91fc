import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const ThreadSummariesTableName = 'thread_summaries';

/** What the llm summarizer folded of a thread: it stands for every message up to `through_seq`. */
export type DbThreadSummary = {
  id: string;
  thread_id: string;
  /** The run whose turn wrote it (one per run). */
  run_id: string | null;
  /** messages.seq (bigint). */
  through_seq: number;
  content: string;
  usage: Record<string, unknown> | null;
  created_at: Date;
};
/** A bigint may be written as text. */
export type DbThreadSummaryInsert = Pick<DbThreadSummary, 'thread_id' | 'content'> &
  Partial<Pick<DbThreadSummary, 'run_id'>> & { through_seq: number | string; usage?: JsonText | null };
export type DbThreadSummaryUpdate = Partial<DbThreadSummaryInsert>;

export type ThreadSummariesTable = Knex.CompositeTableType<
  DbThreadSummary,
  DbThreadSummaryInsert,
  DbThreadSummaryUpdate
>;
