/**
 * The run view: a run as GET /runs/{run_id}, every run list, the converse
 * answer and webhook deliveries show it. In core so the worker (webhooks)
 * shows a run exactly as the API does.
 */
import type { Config } from '../config.js';
import type { RUN_STATUSES, RunDoor, RunOverrides, RunSource } from '../db/tables/index.js';
import { costUsd, defaultPrice } from '../metering/pricing.js';
import type { RunViewRow } from '../repositories/runs.repository.js';

export interface RunPause {
  reason: 'approval' | 'budget' | 'decision' | 'authorization' | 'input';
  since: string | null;
  timeout_at: string | null;
  /** approval: `{pending_call_ids}`; budget: the budget's figures; decision: the call. */
  details: Record<string, unknown>;
}

export interface RunView {
  run_id: string;
  project_id: string;
  agent_id: string | null;
  agent_name: string | null;
  conversation_id: string;
  thread_id: string;
  message_id: string;
  status: (typeof RUN_STATUSES)[number];
  output: { role: 'assistant'; content: string; structured?: unknown } | null;
  tool_calls: Array<Record<string, unknown>>;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens?: number;
    cache_write_tokens?: number;
  };
  model: string | null;
  cost_usd: number | null;
  error: { code: string; message: string; details?: unknown } | null;
  warnings: string[];
  prompt_version_id: string | null;
  /** The version of its agent the turn ran with; null until it starts. */
  agent_version: number | null;
  overrides: RunOverrides | null;
  /** Cancelled with `rollback`: its messages, summaries and events were removed from the conversation. */
  rolled_back: boolean;
  /** The door the message came through: `api` (converse) or `langgraph` (the Agent Protocol). */
  door: RunDoor;
  /** Where the run came from: rest, langgraph, mcp, a2a, cron, eval or sub_agent. */
  source: RunSource;
  /** A sub-agent's run: the run whose tool call started it. */
  parent_run_id: string | null;
  /** GET /runs/{run_id} of a run that called sub-agents: the runs its calls started. */
  sub_agent_runs?: SubAgentRunView[];
  trace_id: string | null;
  workflow_id: string;
  temporal_ui_url: string | null;
  tools: Record<string, unknown> | null;
  pending_approvals: Array<Record<string, unknown>>;
  approvals: Array<Record<string, unknown>>;
  pause: RunPause | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  first_token_ms: number | null;
  approval_wait_ms: number | null;
}

/** A run a sub-agent call started, as its parent's view lists it. */
export interface SubAgentRunView {
  run_id: string;
  agent_id: string | null;
  agent_name: string | null;
  conversation_id: string;
  status: string;
  created_at: string;
  finished_at: string | null;
}

export function temporalUiUrl(config: Config, workflowId: string): string {
  const base = (config.temporalUiUrl ?? `http://127.0.0.1:${config.temporalUiPort}`).replace(/\/$/, '');
  return `${base}/namespaces/${encodeURIComponent(config.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

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

export function timeoutAt(row: RunViewRow): string | null {
  if (!row.paused_at || row.approval_timeout_ms == null) return null;
  return new Date(row.paused_at.getTime() + row.approval_timeout_ms).toISOString();
}

/** Why the run waits, while it does. */
function runPause(row: RunViewRow, pending: Array<Record<string, unknown>>): RunPause | null {
  if (row.status === 'awaiting_approval')
    return {
      reason: 'approval',
      since: iso(row.paused_at),
      timeout_at: timeoutAt(row),
      details: { pending_call_ids: pending.map((p) => String(p.id)) },
    };
  if (row.status.startsWith('awaiting_') && row.pause) {
    const { scope_id: _internal, ...details } = row.pause.details;
    return { ...row.pause, details };
  }
  return null;
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
    agent_version: row.agent_version ?? null,
    overrides: row.overrides,
    rolled_back: row.rolled_back,
    door: row.door,
    source: row.source,
    parent_run_id: row.parent_run_id ?? null,
    trace_id: row.trace_id,
    workflow_id: row.workflow_id,
    temporal_ui_url: temporalUiUrl(config, row.workflow_id),
    tools: row.tools,
    pending_approvals: pending,
    approvals: row.approvals,
    pause: runPause(row, pending),
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    duration_ms: row.finished_at ? row.finished_at.getTime() - row.created_at.getTime() : null,
    first_token_ms: row.first_token_ms,
    approval_wait_ms: row.approval_wait_ms,
  };
}
