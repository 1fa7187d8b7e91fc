/**
 * Counts over a project's runs, grouped by where they came from, their status
 * or their agent: how many, how they ended, what they used and cost, and how
 * long the ended ones took. Read from `runs` itself (indexed by project,
 * source and time), so every replica answers the same.
 */
import type { Db } from '../db/knex.js';
import type { RunSource, RunStatus } from '../db/tables/index.js';

export type RunStatisticsGroup = 'source' | 'status' | 'agent';

export interface RunStatisticsFilter {
  projectId: string;
  agentId?: string | undefined;
  sources?: RunSource[] | undefined;
  /** Created at or after. */
  start?: Date | undefined;
  /** Created before. */
  end?: Date | undefined;
}

export interface RunStatisticsRow {
  source?: RunSource;
  status?: RunStatus;
  agent_id?: string | null;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  p50_duration_ms: number | null;
}

const GROUP_COLUMN: Record<RunStatisticsGroup, string> = {
  source: 'source',
  status: 'status',
  agent: 'agent_id',
};

export class RunStatisticsRepository {
  constructor(private readonly db: Db) {}

  async grouped(group: RunStatisticsGroup, f: RunStatisticsFilter): Promise<RunStatisticsRow[]> {
    const column = GROUP_COLUMN[group];
    const q = this.db('runs')
      .where('project_id', f.projectId)
      .groupBy(column)
      .orderBy([
        { column: 'runs', order: 'desc' },
        { column, order: 'asc' },
      ])
      .select(
        this.db.raw('?? as ??', [column, column]),
        this.db.raw('count(*)::int as runs'),
        this.db.raw(`count(*) filter (where status = 'completed')::int as completed`),
        this.db.raw(`count(*) filter (where status = 'failed')::int as failed`),
        this.db.raw(`count(*) filter (where status = 'cancelled')::int as cancelled`),
        this.db.raw(`coalesce(sum((usage->>'input_tokens')::bigint), 0)::bigint as input_tokens`),
        this.db.raw(`coalesce(sum((usage->>'output_tokens')::bigint), 0)::bigint as output_tokens`),
        this.db.raw(`coalesce(sum((usage->>'cost_usd')::numeric), 0)::float8 as cost_usd`),
        this.db.raw(
          `percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at) * 1000)
             filter (where finished_at is not null and started_at is not null) as p50_duration_ms`,
        ),
      );
    if (f.agentId) void q.where('agent_id', f.agentId);
    if (f.sources?.length) void q.whereIn('source', f.sources);
    if (f.start) void q.where('created_at', '>=', f.start);
    if (f.end) void q.where('created_at', '<', f.end);
    const rows = (await q) as Array<Record<string, unknown>>;
    return rows.map((r) => ({
      ...r,
      input_tokens: Number(r.input_tokens),
      output_tokens: Number(r.output_tokens),
      p50_duration_ms: r.p50_duration_ms === null ? null : Math.round(Number(r.p50_duration_ms)),
    })) as RunStatisticsRow[];
  }
}
