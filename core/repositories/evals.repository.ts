import type { Db } from '../db/knex.js';
import type { ToolCall } from '../llm/types.js';
import {
  EvalResultsTableName,
  EvalsTableName,
  type DbEval,
  type DbEvalInsert,
  type DbEvalResult,
  type DbEvalResultInsert,
  type EvalCase,
  type EvalStatus,
} from '../db/tables/evals.js';
import type { DatasetInput } from '../db/tables/index.js';
import type { Page } from './types.js';

/** A recorded user turn of a conversation: its run, what the user said and what the agent answered. */
export interface RecordedTurn {
  run_id: string;
  input: unknown;
  output: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  latency_ms: number | null;
}

/** A recorded tool call with its result, as a replay answers it. */
export interface RecordedToolCall {
  name: string;
  arguments: string;
  output: string;
  is_error: boolean;
}

/** What a replayed run answers its tool calls from (runs.replay). */
export interface RunReplay {
  eval_id: string;
  /** The recorded run; null for a dataset row (nothing was recorded: every call diverges). */
  source_run_id: string | null;
  /** Diverged sandbox commands run in the scratch conversation's own sandbox. */
  execute_diverged_tools: boolean;
}

/** A dataset row as an eval reads it. */
export interface EvalDatasetRow {
  id: string;
  input: DatasetInput;
  context: Record<string, unknown> | null;
  expected_output: unknown;
}

const NOT_OVER: EvalStatus[] = ['queued', 'running'];

/** Knex only: evals, their per-turn results, and the recordings they replay. */
export class EvalsRepository {
  constructor(readonly db: Db) {}

  async insert(row: DbEvalInsert): Promise<DbEval> {
    const [created] = await this.db(EvalsTableName).insert(row).returning('*');
    return created!;
  }

  async findById(id: string): Promise<DbEval | undefined> {
    return this.db(EvalsTableName).where({ id }).first();
  }

  async list(projectId: string, page: Page): Promise<DbEval[]> {
    return this.db(EvalsTableName)
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  /** queued → running with its cases; a retry (or a later start) keeps the plan it has. */
  async start(id: string, plan: EvalCase[]): Promise<DbEval | undefined> {
    await this.db(EvalsTableName)
      .where({ id, status: 'queued' })
      .update({ status: 'running', plan: JSON.stringify(plan), started_at: this.db.fn.now() });
    return this.findById(id);
  }

  /** Ends the eval unless it has already ended (a cancel wins over a late completion). */
  async finish(
    id: string,
    status: Exclude<EvalStatus, 'queued' | 'running'>,
    error: { code: string; message: string } | null,
  ): Promise<boolean> {
    const n = await this.db(EvalsTableName)
      .where({ id })
      .whereIn('status', NOT_OVER)
      .update({ status, error: error ? JSON.stringify(error) : null, finished_at: this.db.fn.now() });
    return n > 0;
  }

  async results(evalId: string): Promise<DbEvalResult[]> {
    return this.db(EvalResultsTableName)
      .where({ eval_id: evalId })
      .orderBy(['case_index', 'turn_index', 'variant_index']);
  }

  async findResult(
    evalId: string,
    key: { variant_index: number; case_index: number; turn_index: number },
  ): Promise<DbEvalResult | undefined> {
    return this.db(EvalResultsTableName)
      .where({ eval_id: evalId, ...key })
      .first();
  }

  /** Written once per turn: a retried activity's second write is ignored. */
  async insertResult(row: DbEvalResultInsert): Promise<void> {
    await this.db(EvalResultsTableName)
      .insert(row)
      .onConflict(['eval_id', 'variant_index', 'case_index', 'turn_index'])
      .ignore();
  }

  async setJudgement(
    id: string,
    j: { score: number | null; reason: string | null; usage: Record<string, unknown> | null },
  ): Promise<void> {
    await this.db(EvalResultsTableName)
      .where({ id })
      .update({
        judge_score: j.score,
        judge_reason: j.reason,
        judge_usage: j.usage ? JSON.stringify(j.usage) : null,
      });
  }

  /** Which of the ids name conversations of the project in which the agent spoke. */
  async conversationsWithAgent(projectId: string, agentId: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.db('conversations as c')
      .join('threads as t', 't.conversation_pk', 'c.pk')
      .where({ 'c.project_id': projectId, 't.agent_id': agentId })
      .whereIn('c.id', ids)
      .distinct<Array<{ id: string }>>('c.id');
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The agent's recorded user turns in the conversation, oldest first: runs
   * that ended and were not rolled back, with the user's message and the
   * answer's figures.
   */
  async recordedTurns(projectId: string, agentId: string, conversationId: string): Promise<RecordedTurn[]> {
    const { rows } = await this.db.raw<{ rows: RecordedTurn[] }>(
      `select r.id as run_id, m.content as input, r.output->>'content' as output,
              coalesce((r.usage->>'input_tokens')::int, 0) as input_tokens,
              coalesce((r.usage->>'output_tokens')::int, 0) as output_tokens,
              (r.usage->>'cost_usd')::float8 as cost_usd,
              (extract(epoch from (r.finished_at - r.started_at)) * 1000)::int as latency_ms
         from runs r
         join conversations c on c.pk = r.conversation_pk
         join messages m on m.run_id = r.id and m.step_key = 'user'
        where c.project_id = :project and c.id = :conversation and r.agent_id = :agent
          and r.status in ('completed', 'failed') and not r.rolled_back
        order by r.created_at, r.id`,
      { project: projectId, conversation: conversationId, agent: agentId },
    );
    return rows;
  }

  async recordedTurn(runId: string): Promise<RecordedTurn | undefined> {
    const { rows } = await this.db.raw<{ rows: RecordedTurn[] }>(
      `select r.id as run_id, m.content as input, r.output->>'content' as output,
              coalesce((r.usage->>'input_tokens')::int, 0) as input_tokens,
              coalesce((r.usage->>'output_tokens')::int, 0) as output_tokens,
              (r.usage->>'cost_usd')::float8 as cost_usd,
              (extract(epoch from (r.finished_at - r.started_at)) * 1000)::int as latency_ms
         from runs r join messages m on m.run_id = r.id and m.step_key = 'user'
        where r.id = :run`,
      { run: runId },
    );
    return rows[0];
  }

  async conversationContext(projectId: string, conversationId: string): Promise<Record<string, unknown>> {
    const row = await this.db('conversations')
      .where({ project_id: projectId, id: conversationId })
      .first<{ context: Record<string, unknown> } | undefined>('context');
    return row?.context ?? {};
  }

  async datasetRows(datasetId: string): Promise<EvalDatasetRow[]> {
    return this.db('dataset_rows')
      .where({ dataset_id: datasetId })
      .orderBy('seq')
      .select<EvalDatasetRow[]>('id', 'input', 'context', 'expected_output');
  }

  async datasetRow(id: string): Promise<EvalDatasetRow | undefined> {
    return this.db('dataset_rows')
      .where({ id })
      .first<EvalDatasetRow | undefined>('id', 'input', 'context', 'expected_output');
  }

  /** The eval's scratch conversation, created once; marked with the eval so lists leave it out. */
  async ensureScratchConversation(
    projectId: string,
    id: string,
    evalId: string,
    context: Record<string, unknown>,
  ): Promise<void> {
    await this.db.raw(
      `insert into conversations (project_id, id, namespace, context, eval_id)
       values (:project, :id, 'eval', :context::jsonb, :eval)
       on conflict (project_id, id) do nothing`,
      { project: projectId, id, context: JSON.stringify(context), eval: evalId },
    );
  }

  /** Whether the prompt is the project's and has a version (a judge needs one). */
  async promptInProject(projectId: string, promptId: string): Promise<boolean> {
    const row = await this.db('prompts as p')
      .join('prompt_versions as v', 'v.prompt_id', 'p.id')
      .where({ 'p.id': promptId, 'p.project_id': projectId })
      .first<{ id: string } | undefined>('p.id');
    return row !== undefined;
  }

  async agentName(agentId: string): Promise<string | undefined> {
    return (await this.db('agents').where({ id: agentId }).first<{ name: string } | undefined>('name'))?.name;
  }

  /** The plan a run pinned at its start (activities/session/types.ts TurnPlan), if it started. */
  async runPlan<T>(runId: string): Promise<T | undefined> {
    const row = await this.db('runs').where({ id: runId }).first<{ plan: T | null } | undefined>('plan');
    return row?.plan ?? undefined;
  }

  async setRunReplay(runId: string, replay: RunReplay): Promise<void> {
    await this.db('runs')
      .where({ id: runId })
      .update({ replay: JSON.stringify(replay) } as never);
  }

  async runReplay(runId: string): Promise<RunReplay | null> {
    const row = await this.db('runs')
      .where({ id: runId })
      .first<{ replay: RunReplay | null } | undefined>('replay');
    return row?.replay ?? null;
  }

  /** A recorded run's tool calls with their results, in the order they were made. */
  async recordedToolCalls(runId: string): Promise<RecordedToolCall[]> {
    const rows = await this.db('messages')
      .where({ run_id: runId })
      .whereIn('role', ['assistant', 'tool'])
      .orderBy('seq')
      .select<
        Array<{
          role: string;
          content: unknown;
          tool_calls: ToolCall[] | null;
          tool_call_id: string | null;
          metadata: { is_error?: boolean } | null;
        }>
      >('role', 'content', 'tool_calls', 'tool_call_id', 'metadata');
    const results = new Map<string, { output: string; is_error: boolean }>();
    for (const r of rows)
      if (r.role === 'tool' && r.tool_call_id)
        results.set(r.tool_call_id, {
          output: typeof r.content === 'string' ? r.content : JSON.stringify(r.content),
          is_error: Boolean(r.metadata?.is_error),
        });
    const calls: RecordedToolCall[] = [];
    for (const r of rows)
      for (const c of r.tool_calls ?? []) {
        const result = results.get(c.id);
        if (result) calls.push({ name: c.name, arguments: c.arguments, ...result });
      }
    return calls;
  }
}
