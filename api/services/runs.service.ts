import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import {
  RunStatisticsRepository,
  type RunStatisticsRow,
} from '../../core/repositories/run-statistics.repository.js';
import { RunsRepository, type RunFilter, type RunViewRow } from '../../core/repositories/runs.repository.js';
import { SubAgentsRepository } from '../../core/repositories/sub-agents.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { PendingApproval, RunListQuery, RunStatisticsQuery, RunView } from '../schemas/runs.schemas.js';
import { iso, temporalUiUrl, timeoutAt, toRunView } from '../../core/runs/run-view.js';
import { pickUnique } from './name-lookup.js';
import { requireProject } from './project-scope.js';

export { temporalUiUrl, toRunView };

/** An inbox entry: a paused run and the calls it waits on. */
function toPendingApproval(row: RunViewRow, config: Config): PendingApproval {
  const calls = row.pending_approvals ?? [];
  const steps = new Set(calls.map((c) => c.step));
  return {
    run_id: row.id,
    project_id: row.project_id,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    conversation_id: row.conversation_client_id,
    thread_id: row.thread_id,
    message_id: row.message_id,
    since: iso(row.paused_at),
    timeout_at: timeoutAt(row),
    calls,
    decided: row.approvals.filter((a) => steps.has(a.step)),
    trace_id: row.trace_id,
    workflow_id: row.workflow_id,
    temporal_ui_url: temporalUiUrl(config, row.workflow_id),
    created_at: row.created_at.toISOString(),
  };
}

function filterOf(q: RunListQuery): RunFilter {
  if (q.start_time && q.end_time && q.start_time >= q.end_time)
    throw ValidationError.field('start_time', 'start_time must be before end_time', 'date.max');
  return {
    ...(q.status ? { statuses: q.status } : {}),
    ...(q.source ? { sources: q.source } : {}),
    ...(q.start_time ? { start: q.start_time } : {}),
    ...(q.end_time ? { end: q.end_time } : {}),
  };
}

/** Runs as lists: of a project, a conversation, an agent; and the approvals waiting across a project. */
export class RunsService {
  private readonly runs: RunsRepository;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
  ) {
    this.runs = new RunsRepository(db);
  }

  async view(runId: string, projectId?: string): Promise<RunView> {
    const row = await this.runs.findView(runId);
    if (!row || (projectId !== undefined && row.project_id !== projectId)) throw new NotFoundError('run');
    const view = toRunView(row, this.config);
    // Only a run that called sub-agents lists them: every other view is the one run lists show.
    const children = await new SubAgentsRepository(this.db).children(runId);
    if (!children.length) return view;
    const sub_agent_runs = children.map((c) => ({
      ...c,
      created_at: c.created_at.toISOString(),
      finished_at: iso(c.finished_at),
    }));
    return { ...view, sub_agent_runs };
  }

  private async list(filter: RunFilter, page: Page): Promise<RunView[]> {
    return (await this.runs.listViews(filter, page)).map((r) => toRunView(r, this.config));
  }

  async listForProject(projectId: string, agentId: string | undefined, q: RunListQuery): Promise<RunView[]> {
    const filter = filterOf(q);
    await requireProject(this.db, projectId);
    return this.list({ ...filter, projectId, ...(agentId ? { agentId } : {}) }, q);
  }

  /** A conversation by its client id: without `project_id` it must be unique across projects. */
  async listForConversation(
    conversationId: string,
    projectId: string | undefined,
    q: RunListQuery,
  ): Promise<RunView[]> {
    const filter = filterOf(q);
    if (projectId !== undefined) await requireProject(this.db, projectId);
    const found = await new ConversationsRepository(this.db).findById(conversationId, projectId);
    const conversation = pickUnique(found, 'conversation');
    return this.list({ ...filter, conversationPk: conversation.pk }, q);
  }

  async listForAgent(agentId: string, projectId: string | undefined, q: RunListQuery): Promise<RunView[]> {
    const filter = filterOf(q);
    const agent = await new AgentsRepository(this.db).findById(agentId);
    if (!agent || (projectId !== undefined && agent.project_id !== projectId))
      throw new NotFoundError('agent');
    return this.list({ ...filter, agentId }, q);
  }

  /** Counts over the project's runs, one row per source, status or agent (GET /runs/statistics). */
  async statistics(q: RunStatisticsQuery): Promise<RunStatisticsRow[]> {
    const window = filterOf({ ...q, limit: 1, offset: 0 });
    await requireProject(this.db, q.project_id);
    return new RunStatisticsRepository(this.db).grouped(q.group_by, {
      projectId: q.project_id,
      agentId: q.agent_id,
      sources: q.source,
      start: window.start,
      end: window.end,
    });
  }

  /** Every run of the project waiting for approval, the most recently paused first. */
  async pendingApprovals(
    projectId: string,
    agentId: string | undefined,
    page: Page,
  ): Promise<PendingApproval[]> {
    await requireProject(this.db, projectId);
    const rows = await this.runs.listAwaitingApproval(projectId, agentId, page);
    return rows.map((r) => toPendingApproval(r, this.config));
  }
}
