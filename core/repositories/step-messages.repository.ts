import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { MessagesTableName, type DbMessage } from '../db/tables/index.js';
import type { ToolCall } from '../llm/types.js';

type Conn = Db | Knex.Transaction;

/** A message of a run as its outcome is read, its jsonb columns in the shapes the session writes. */
export type RunMessageRow = Pick<DbMessage, 'role' | 'content' | 'tool_call_id' | 'hidden' | 'step_key'> & {
  tool_calls: ToolCall[] | null;
  metadata: { is_error?: boolean } | null;
};

/**
 * The messages a run's steps stored, found by step key: `<step>.assistant`
 * for a model's answer, `<step>.tool.<call id>` for a tool's result (see
 * `storeStep` and `storeToolResult` in run-events.repository.ts, which write them). Knex only.
 */
export class StepMessagesRepository {
  constructor(private readonly db: Db) {}

  /** The step's stored answer, when an earlier attempt stored it. */
  async answer(
    runId: string,
    step: number,
  ): Promise<{ content: unknown; tool_calls: ToolCall[] | null } | undefined> {
    return this.db(MessagesTableName)
      .where({ run_id: runId, step_key: `${step}.assistant` })
      .first<{ content: unknown; tool_calls: ToolCall[] | null } | undefined>('content', 'tool_calls');
  }

  /** The tool calls of the step's answer (none when it has no answer). */
  async toolCalls(runId: string, step: number): Promise<ToolCall[]> {
    const row = await this.db(MessagesTableName)
      .where({ run_id: runId, step_key: `${step}.assistant` })
      .first<{ tool_calls: ToolCall[] | null } | undefined>('tool_calls');
    return row?.tool_calls ?? [];
  }

  /** The metadata of the call's stored result; undefined when it has none yet. */
  async toolResult(
    runId: string,
    step: number,
    callId: string,
  ): Promise<Record<string, unknown> | undefined> {
    const row = await this.db(MessagesTableName)
      .where({ run_id: runId, step_key: `${step}.tool.${callId}` })
      .first<{ metadata: Record<string, unknown> | null } | undefined>('metadata');
    return row ? (row.metadata ?? {}) : undefined;
  }

  /** Every message of the run by seq. */
  async ofRun(runId: string, conn: Conn = this.db): Promise<RunMessageRow[]> {
    return conn(MessagesTableName)
      .where({ run_id: runId })
      .orderBy('seq')
      .select<RunMessageRow[]>(
        'role',
        'content',
        'tool_calls',
        'tool_call_id',
        'hidden',
        'metadata',
        'step_key',
      );
  }
}
