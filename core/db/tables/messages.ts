import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const MessagesTableName = 'messages';

export const MESSAGE_ROLES = ['user', 'assistant', 'tool', 'system'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export type DbMessage = {
  id: string;
  /** The order of the thread's messages (bigserial). */
  seq: number;
  thread_id: string;
  role: MessageRole;
  content: unknown;
  tool_calls: unknown;
  tool_call_id: string | null;
  usage: unknown;
  /** The run (converse turn) that wrote it, and which step of that run. */
  run_id: string | null;
  step_key: string | null;
  prompt_version_id: string | null;
  trace_id: string | null;
  /** Corrective exchanges (structured-output retries): in the transcript, out of later turns' history. */
  hidden: boolean;
  /** jsonb: small facts such as a tool result's name and error flag. */
  metadata: unknown;
  created_at: Date;
};
/** What an insert sends: jsonb columns as JSON text. */
export type DbMessageInsert = {
  thread_id: string;
  role: MessageRole;
  content: JsonText;
  tool_calls?: JsonText | null;
  tool_call_id?: string | null;
  usage?: JsonText | null;
  run_id?: string | null;
  step_key?: string | null;
  prompt_version_id?: string | null;
  trace_id?: string | null;
  hidden?: boolean;
  metadata?: JsonText | null;
};
export type DbMessageUpdate = Partial<Omit<DbMessageInsert, 'thread_id'>>;

export type MessagesTable = Knex.CompositeTableType<DbMessage, DbMessageInsert, DbMessageUpdate>;
