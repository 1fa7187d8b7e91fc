import type { Knex } from 'knex';
import type { JsonText, Timestamp } from './columns.js';

export const RunsTableName = 'runs';

export type RunStatus =
  | 'queued'
  | 'running'
  | 'awaiting_approval'
  | 'awaiting_budget'
  | 'awaiting_decision'
  | 'awaiting_authorization'
  | 'awaiting_input'
  | 'completed'
  | 'failed'
  | 'cancelled';
/** Every status, in the order a run goes through them. */
export const RUN_STATUSES = [
  'queued',
  'running',
  'awaiting_approval',
  'awaiting_budget',
  'awaiting_decision',
  'awaiting_authorization',
  'awaiting_input',
  'completed',
  'failed',
  'cancelled',
] as const satisfies readonly RunStatus[];
/** A run in one of these has ended: nothing changes it any more. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** A run's or a step's tokens, as core/llm/types.ts Usage counts them. */
export type RunUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  /**
   * A run's: what its model calls cost, summed as each was charged; absent
   * while none was priced, and on runs stored before costs were recorded.
   */
  cost_usd?: number;
};

export type TurnError = {
  code: string;
  message: string;
  details?: unknown;
};

export type RunOutput = {
  role: 'assistant';
  content: string;
  /** The answer parsed, when the agent has a schema and the answer matches it. */
  structured?: unknown;
};

/**
 * What a turn runs with instead of its agent's configuration (converse
 * `overrides`): checked to belong to the run's project when the message
 * arrives, applied by the turn's plan; the agent and its labels are not
 * changed.
 */
export type RunOverrides = {
  /** A version of any prompt of the project, instead of the one the agent's label points at. */
  prompt_version_id?: string;
  /** A model of the project, instead of the agent's. */
  model_id?: string;
  /** Merged over the model's own `parameters`. */
  parameters?: Record<string, unknown>;
};

/** What a run may wait for, other than approval: budget, a decision on a call, an MCP server's authorization, a person's input. */
export type RunPauseReason = 'budget' | 'decision' | 'authorization' | 'input';

/** Why a run waits (other than approval, which has its own columns): the run view's `pause`. */
export type StoredRunPause = {
  reason: RunPauseReason;
  /** ISO time the wait began. */
  since: string;
  /** ISO time the wait ends on its own (the agent's timeout), or null. */
  timeout_at: string | null;
  details: Record<string, unknown>;
};

export type RunDoor = 'api' | 'langgraph';

/**
 * Where a run came from: our REST API (converse), the Agent Protocol, the
 * MCP server or A2A door, a cron, an eval's replay, or a parent agent's turn
 * calling a sub-agent. Every source is metered and budgeted alike.
 */
export const RUN_SOURCES = ['rest', 'langgraph', 'mcp', 'a2a', 'cron', 'eval', 'sub_agent'] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/** A run asked for through the Agent Protocol: what its client asked, returned in its run view. */
export type RunProtocolRequest = {
  assistant_id: string;
  metadata: Record<string, unknown>;
  multitask_strategy: 'reject' | 'enqueue' | 'interrupt' | 'rollback';
  stream_mode: string[];
  /** Run in a throwaway thread (a stateless run). */
  stateless?: boolean;
  /** Deleted through the protocol: gone from its answers, kept as our record. */
  forgotten?: boolean;
  kwargs: Record<string, unknown>;
};

/** One converse message and the turn that answers it: the idempotency unit. */
export type DbRun = {
  id: string;
  project_id: string;
  conversation_pk: string;
  thread_id: string;
  agent_id: string | null;
  /** The client's idempotency key, unique per conversation. */
  message_id: string;
  /** sha256 of what the message asked, to tell a retry from a reuse of the id. */
  request_hash: string;
  status: RunStatus;
  workflow_id: string;
  trace_id: string | null;
  prompt_version_id: string | null;
  /** The version of its agent the turn ran with (pinned with its plan); null until it starts. */
  agent_version: number | null;
  output: RunOutput | null;
  tool_calls: Array<Record<string, unknown>>;
  /** Summed over the turn's model calls; the cache counts (part of input_tokens) only once some were reported. */
  usage: RunUsage;
  error: TurnError | null;
  warnings: string[];
  /** The turn plan pinned at its start (activities/session/types.ts TurnPlan). */
  plan: Record<string, unknown> | null;
  /** What the turn offered the model (see activities/session/tools.ts). */
  tools: Record<string, unknown> | null;
  /** The calls waiting for approval while status is awaiting_approval. */
  pending_approvals: Array<Record<string, unknown>> | null;
  approvals: Array<Record<string, unknown>>;
  /** What this turn was asked to run with instead of the agent's configuration; null: nothing. */
  overrides: RunOverrides | null;
  /** Cancelled with `rollback`: its messages, summaries and events were removed from the conversation. */
  rolled_back: boolean;
  /** Why the run waits, while its status is awaiting_budget, _decision, _authorization or _input. */
  pause: StoredRunPause | null;
  /** The person a converse turn acts for (per-user MCP authorization), when its caller named one. */
  end_user_id: string | null;
  /** The seq of the run's latest event (run_events). */
  last_event_seq: number;
  /** The door the run came through: `api` (converse), `langgraph` (the Agent Protocol), … */
  door: RunDoor;
  /** Where the run came from (its door, or a cron, eval or parent agent). */
  source: RunSource;
  /** What the door's client asked beside the message (the Agent Protocol's metadata, stream modes, strategy). */
  protocol: RunProtocolRequest | null;
  /** A sub-agent's run: the run whose tool call started it. */
  parent_run_id: string | null;
  /** Budgets beside its own agent's and conversation's that its spend counts against (a sub-agent's: its callers'). */
  budget_scopes: Array<{ scope: 'agent' | 'conversation'; scope_id: string }>;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};
/** What an insert sends: jsonb columns as JSON text; columns with a default (or nullable) may be left out. */
export type DbRunInsert = {
  id?: string;
  project_id: string;
  conversation_pk: string;
  thread_id: string;
  agent_id?: string | null;
  message_id: string;
  request_hash: string;
  status?: RunStatus;
  workflow_id: string;
  trace_id?: string | null;
  prompt_version_id?: string | null;
  agent_version?: number | null;
  output?: JsonText | null;
  tool_calls?: JsonText;
  usage?: JsonText;
  error?: JsonText | null;
  /** Also SQL: warnings are appended to (`warnings || …`). */
  warnings?: JsonText | Knex.Raw;
  plan?: JsonText | null;
  tools?: JsonText | null;
  pending_approvals?: JsonText | null;
  approvals?: JsonText;
  overrides?: JsonText | null;
  door?: RunDoor;
  source?: RunSource;
  protocol?: JsonText | null;
  parent_run_id?: string | null;
  budget_scopes?: JsonText;
  rolled_back?: boolean;
  pause?: JsonText | null;
  end_user_id?: string | null;
  last_event_seq?: number;
  created_at?: Timestamp;
  started_at?: Timestamp | null;
  finished_at?: Timestamp | null;
};
export type DbRunUpdate = Partial<DbRunInsert>;

export type RunsTable = Knex.CompositeTableType<DbRun, DbRunInsert, DbRunUpdate>;
