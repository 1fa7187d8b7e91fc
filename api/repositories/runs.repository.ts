import type { Knex } from 'knex';
import type { DbRun } from '../../activities/session/run-store.js';
import type { Db } from '../db/knex.js';

type Conn = Db | Knex.Transaction;

export interface RunInsert {
  id: string;
  project_id: string;
  conversation_pk: string;
  thread_id: string;
  agent_id: string;
  message_id: string;
  request_hash: string;
  workflow_id: string;
  trace_id: string | null;
}

/** Runs (one per converse message) and the rows the converse flow writes with them. Knex only. */
export class RunsRepository {
  constructor(readonly db: Db) {}

  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  findAgent(id: string): Promise<{ id: string; project_id: string; name: string } | undefined> {
    return this.db('agents')
      .where({ id })
      .first<{ id: string; project_id: string; name: string } | undefined>('id', 'project_id', 'name');
  }

  /** One statement whether it exists or not; updated_at tracks the last message. */
  async upsertConversation(
    trx: Knex.Transaction,
    projectId: string,
    id: string,
    namespace: string,
  ): Promise<{ pk: string; namespace: string }> {
    const { rows } = await trx.raw<{ rows: Array<{ pk: string; namespace: string }> }>(
      `insert into conversations (project_id, id, namespace) values (?, ?, ?)
       on conflict (project_id, id) do update set updated_at = now()
       returning pk, namespace`,
      [projectId, id, namespace],
    );
    return rows[0]!;
  }

  /** Template variables are merged: keys given replace stored ones, the rest stay. */
  async mergeContext(trx: Knex.Transaction, pk: string, context: Record<string, unknown>): Promise<void> {
    await trx.raw(`update conversations set context = context || ?::jsonb, updated_at = now() where pk = ?`, [
      JSON.stringify(context),
      pk,
    ]);
  }

  /** The session's thread, created with its first message; updated_at tracks its last turn. */
  async upsertSessionThread(trx: Knex.Transaction, conversationPk: string, agentId: string): Promise<string> {
    const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
      `insert into threads (conversation_pk, agent_id) values (?, ?)
       on conflict (conversation_pk, agent_id) where agent_id is not null do update set updated_at = now()
       returning id`,
      [conversationPk, agentId],
    );
    return rows[0]!.id;
  }

  findByMessage(conn: Conn, conversationPk: string, messageId: string): Promise<DbRun | undefined> {
    return conn('runs')
      .where({ conversation_pk: conversationPk, message_id: messageId })
      .first<DbRun | undefined>();
  }

  async insert(trx: Knex.Transaction, row: RunInsert): Promise<DbRun> {
    const [run] = (await trx('runs')
      .insert({ ...row, status: 'queued' })
      .returning('*')) as DbRun[];
    return run!;
  }

  async insertUserMessage(
    trx: Knex.Transaction,
    row: { thread_id: string; run_id: string; content: unknown; trace_id: string | null },
  ): Promise<void> {
    await trx('messages').insert({
      thread_id: row.thread_id,
      run_id: row.run_id,
      step_key: 'user',
      role: 'user',
      content: JSON.stringify(row.content),
      trace_id: row.trace_id,
    });
  }

  /** A run with its conversation's client id. */
  findWithConversation(runId: string): Promise<(DbRun & { conversation_client_id: string }) | undefined> {
    return this.db('runs as r')
      .join('conversations as c', 'c.pk', 'r.conversation_pk')
      .where('r.id', runId)
      .first<(DbRun & { conversation_client_id: string }) | undefined>(
        'r.*',
        'c.id as conversation_client_id',
      );
  }
}
