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
/** A 2026-07-28 question's place in its server's `input_required` result. */
export interface InputRound {
  /** 1, 2, …: the call's rounds in order. */
  round: number;
  /** The question's key in `inputRequests`, under which its answer goes back in `inputResponses`. */
  key: string;
  /** The server's opaque state for the round, echoed back unmodified. */
  request_state?: string;
}

export type DbRunInputRequest = {
  id: string;
  run_id: string;
  step: number;
  call_id: string;
  seq: number;
  request: Record<string, unknown>;
  answer: StoredInputAnswer | null;
  state: 'held' | 'released';
  /** The `input_required` round the question came in (2026-07-28 servers); null for a 2025-era question. */
  round: InputRound | null;
  created_at: Date;
  answered_at: Date | null;
};

export type DbRunInputRequestInsert = {
  run_id: string;
  step: number;
  call_id: string;
  seq: number;
  request: JsonText;
  round?: JsonText;
};

export type RunInputRequestsTable = Knex.CompositeTableType<
  DbRunInputRequest,
  DbRunInputRequestInsert,
  { answer?: JsonText; state?: 'held' | 'released'; answered_at?: Date | Knex.Raw; round?: JsonText }
>;
