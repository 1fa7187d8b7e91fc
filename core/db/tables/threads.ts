import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const ThreadsTableName = 'threads';

/** A conversation's transcript with one agent (one per session); agent_id is null once the agent is deleted. */
export type DbThread = {
  id: string;
  conversation_pk: string;
  agent_id: string | null;
  /** Input tokens the provider reported on the thread's last model call. */
  last_input_tokens: number | null;
  created_at: Date;
  updated_at: Date;
};
export type DbThreadInsert = Pick<DbThread, 'conversation_pk'> &
  Partial<Pick<DbThread, 'agent_id' | 'last_input_tokens'>>;
export type DbThreadUpdate = Partial<Pick<DbThread, 'agent_id' | 'last_input_tokens'>> & {
  updated_at?: Timestamp;
};

export type ThreadsTable = Knex.CompositeTableType<DbThread, DbThreadInsert, DbThreadUpdate>;
