import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const RunInputRequestsTableName = 'run_input_requests';

/** A person's answer to an MCP server's question (elicitation). */
export type StoredInputAnswer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
};

/**
 * A question an MCP server asked during one tool call, and its answer. `held`:
 * the call waits on it while connected (any replica's answer reaches it here);
 * `released`: the call stopped waiting and the session workflow waits instead.
 */
export type DbRunInputRequest = {
  id: string;
  run_id: string;
  step: number;
  call_id: string;
  seq: number;
  request: Record<string, unknown>;
  answer: StoredInputAnswer | null;
  state: 'held' | 'released';
  created_at: Date;
  answered_at: Date | null;
};

export type DbRunInputRequestInsert = {
  run_id: string;
  step: number;
  call_id: string;
  seq: number;
  request: JsonText;
};

export type RunInputRequestsTable = Knex.CompositeTableType<
  DbRunInputRequest,
  DbRunInputRequestInsert,
  { answer?: JsonText; state?: 'held' | 'released'; answered_at?: Date | Knex.Raw }
>;
