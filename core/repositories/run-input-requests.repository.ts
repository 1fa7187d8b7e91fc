import type { Db } from '../db/knex.js';
import {
  RunInputRequestsTableName,
  type DbRunInputRequest,
  type InputRound,
  type StoredInputAnswer,
} from '../db/tables/index.js';

/** Where one question sits: the call that asked it and its place among that call's questions. */
export interface QuestionPlace {
  run_id: string;
  step: number;
  call_id: string;
  seq: number;
}

/**
 * The questions MCP servers asked during tool calls, and their answers. A
 * call waiting connected polls its row; the API answers it from any replica.
 */
export class RunInputRequestsRepository {
  constructor(private readonly db: Db) {}

  /** The question's row, created on its first asking (a call made again finds the same row). */
  async ensure(
    place: QuestionPlace,
    request: Record<string, unknown>,
    round?: InputRound,
  ): Promise<DbRunInputRequest> {
    const insert = this.db(RunInputRequestsTableName)
      .insert({
        ...place,
        request: JSON.stringify(request),
        ...(round ? { round: JSON.stringify(round) } : {}),
      })
      .onConflict(['run_id', 'step', 'call_id', 'seq']);
    // A round asked again carries the server's new requestState: the retry must echo that one.
    await (round ? insert.merge({ round: JSON.stringify(round) }) : insert.ignore());
    return (await this.db(RunInputRequestsTableName).where(place).first())!;
  }

  /** The questions one call asked, in order. */
  async ofCall(runId: string, step: number, callId: string): Promise<DbRunInputRequest[]> {
    return this.db(RunInputRequestsTableName).where({ run_id: runId, step, call_id: callId }).orderBy('seq');
  }

  async find(id: string): Promise<DbRunInputRequest | undefined> {
    return this.db(RunInputRequestsTableName).where({ id }).first();
  }

  /** The run's latest unanswered question, the one its pause shows. */
  async pending(runId: string): Promise<DbRunInputRequest | undefined> {
    return this.db(RunInputRequestsTableName)
      .where({ run_id: runId })
      .whereNull('answer')
      .orderBy([
        { column: 'step', order: 'desc' },
        { column: 'created_at', order: 'desc' },
      ])
      .first();
  }

  /**
   * Records the answer unless one is there; the row as it was answered
   * (`state` tells whether a call was still waiting on it), or undefined
   * when it had an answer already.
   */
  async answer(id: string, answer: StoredInputAnswer): Promise<DbRunInputRequest | undefined> {
    const [row] = await this.db(RunInputRequestsTableName)
      .where({ id })
      .whereNull('answer')
      .update({ answer: JSON.stringify(answer), answered_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  /**
   * The waiting call gives up: the session waits for the answer instead.
   * Returns the answer when one came first (the call uses it), else null.
   */
  async release(id: string): Promise<StoredInputAnswer | null> {
    const released = await this.db(RunInputRequestsTableName)
      .where({ id })
      .whereNull('answer')
      .update({ state: 'released' })
      .returning('id');
    if (released.length) return null;
    return (await this.find(id))?.answer ?? null;
  }
}
