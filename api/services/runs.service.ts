import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { costUsd, defaultPrice } from '../../core/metering/pricing.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import { RunsRepository, type RunFilter, type RunViewRow } from '../../core/repositories/runs.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { PendingApproval, RunListQuery, RunView } from '../schemas/runs.schemas.js';
import { pickUnique } from './name-lookup.js';
import { requireProject } from './project-scope.js';

export function temporalUiUrl(config: Config, workflowId: string): string {
  const base = (config.temporalUiUrl ?? `http://127.0.0.1:${config.temporalUiPort}`).replace(/\/$/, '');
  return `${base}/namespaces/${encodeURIComponent(config.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The run's tokens as numbers (jsonb sums may come back as strings); cache counts only when some were reported. */
function runUsage(row: RunViewRow): RunView['usage'] {
  const read = Number(row.usage.cache_read_tokens ?? 0);
  const write = Number(row.usage.cache_write_tokens ?? 0);
  return {
    input_tokens: Number(row.usage.input_tokens ?? 0),
    output_tokens: Number(row.usage.output_tokens ?? 0),
    ...(read ? { cache_read_tokens: read } : {}),
    ...(write ? { cache_write_tokens: write } : {}),
  };
}

/**
 * What the run's model calls cost, as each was charged (their spans and
 * usage rows carry the same figures). A run stored before costs were
 * recorded has none: its tokens at its model's price stand in (cache reads
 * and writes at its cache rates). Null when no price is known.
 */
function runCost(row: RunViewRow): number | null {
  const recorded = row.usage.cost_usd;
  const usd = recorded !== undefined ? Number(recorded) : estimatedCost(row);
  return usd === null ? null : Math.round(usd * 1e8) / 1e8;
}

function estimatedCost(row: RunViewRow): number | null {
  const price = row.model_pricing ?? (row.model ? defaultPrice(row.model) : undefined);
  return price ? costUsd(price, runUsage(row)) : null;
}

function timeoutAt(row: RunViewRow): string | null {
  if (!row.paused_at || row.approval_timeout_ms == null) return null;
  return new Date(row.paused_at.getTime() + row.approval_timeout_ms).toISOString();
}

/** The run view of GET /runs/{run_id}, every run list and the converse answer. */
export function toRunView(row: RunViewRow, config: Config): RunView {
  const pending = row.pending_approvals ?? [];
  return {
    run_id: row.id,
    project_id: row.project_id,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    conversation_id: row.conversation_client_id,
    thread_id: row.thread_id,
    message_id: row.message_id,
    status: row.status,
    output: row.output,
    tool_calls: row.tool_calls,
    usage: runUsage(row),
    model: row.model,
    cost_usd: runCost(row),
    error: row.error,
    warnings: row.warnings,
    prompt_version_id: row.prompt_version_id,
    overrides: row.overrides,
    trace_id: row.trace_id,
    workflow_id: row.workflow_id,
    temporal_ui_url: temporalUiUrl(config, row.workflow_id),
    tools: row.tools,
    pending_approvals: pending,
    approvals: row.approvals,
    pause:
      row.status === 'awaiting_approval'
        ? {
            reason: 'approval',
            since: iso(row.paused_at),
            timeout_at: timeoutAt(row),
            details: { pending_call_ids: pending.map((p) => String(p.id)) },
          }
        : null,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    duration_ms: row.finished_at ? row.finished_at.getTime() - row.created_at.getTime() : null,
    first_token_ms: row.first_token_ms,
    approval_wait_ms: row.approval_wait_ms,
  };
}

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
    return toRunView(row, this.config);
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
