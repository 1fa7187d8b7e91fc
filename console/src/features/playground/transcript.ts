/**
 * A run's events folded into what the page shows: the model's steps with
 * their text and tool calls, approvals waiting, the outcome. Pure, so the same
 * events (live, replayed or resumed) always give the same transcript.
 */

import type { RunPause } from '../../api/types.js';

/** One event of a run's stream: `id:` (its number), `event:`, and the JSON `data:`. */
export interface RunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
export const SANDBOX_TOOL = 'execute_bash_commands';

export type CallState = 'requested' | 'awaiting_approval' | 'running' | 'done' | 'error' | 'declined';

export interface ToolCallView {
  key: string;
  id: string;
  step: number;
  name: string;
  arguments?: string;
  server?: string;
  state: CallState;
  output?: string;
  exitCode?: number | null;
  durationMs?: number | null;
  timedOut?: boolean;
  decision?: 'approved' | 'rejected';
  decidedBy?: string;
}

export interface StepView {
  step: number;
  text: string;
  complete: boolean;
  restarted: boolean;
  /** The answer did not match the agent's schema: the model was asked again. */
  invalid?: unknown;
  structured?: unknown;
  calls: ToolCallView[];
}

export type TurnStatus =
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

const PAUSED: ReadonlySet<string> = new Set([
  'awaiting_approval',
  'awaiting_budget',
  'awaiting_decision',
  'awaiting_authorization',
  'awaiting_input',
]);

/**
 * Whether the turn waits for someone: an approval, budget, a decision on a
 * tool call, an MCP server's authorization, an answer to a server's question.
 */
export const isPaused = (s: TurnStatus) => PAUSED.has(s);

export interface TurnView {
  status: TurnStatus;
  steps: StepView[];
  output?: { content?: string; structured?: unknown };
  usage?: { input_tokens?: number; output_tokens?: number };
  error?: { code?: string; message?: string };
  /** While paused: why, until when, and the reason's details, as `run.paused` said them. */
  pause?: RunPause;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function stepOf(steps: Map<number, StepView>, n: number): StepView {
  let s = steps.get(n);
  if (!s) steps.set(n, (s = { step: n, text: '', complete: false, restarted: false, calls: [] }));
  return s;
}

function callOf(steps: Map<number, StepView>, data: Record<string, unknown>): ToolCallView {
  const step = num(data.step) ?? 0;
  const id = typeof data.id === 'string' || typeof data.id === 'number' ? String(data.id) : '';
  const s = stepOf(steps, step);
  let c = s.calls.find((x) => x.id === id);
  if (!c) {
    c = { key: `${step}:${id}`, id, step, name: str(data.name) ?? '?', state: 'requested' };
    s.calls.push(c);
  }
  if (str(data.name)) c.name = str(data.name)!;
  if (data.arguments !== undefined && data.arguments !== null)
    c.arguments = typeof data.arguments === 'string' ? data.arguments : JSON.stringify(data.arguments);
  if (str(data.server)) c.server = str(data.server);
  return c;
}

function applyResumed(steps: Map<number, StepView>, data: Record<string, unknown>) {
  const step = num(data.step) ?? 0;
  for (const id of Array.isArray(data.approved) ? data.approved : []) {
    const c = callOf(steps, { step, id });
    c.decision = 'approved';
    if (c.state === 'awaiting_approval') c.state = 'requested';
  }
  for (const r of Array.isArray(data.rejected) ? (data.rejected as Array<Record<string, unknown>>) : []) {
    const c = callOf(steps, { step, id: r.id });
    c.decision = 'rejected';
    c.decidedBy = str(r.by);
    if (c.state === 'awaiting_approval' || c.state === 'requested') c.state = 'declined';
  }
}

function applyCompleted(steps: Map<number, StepView>, d: Record<string, unknown>) {
  const c = callOf(steps, d);
  c.output = typeof d.output === 'string' ? d.output : JSON.stringify(d.output);
  c.state = c.decision === 'rejected' ? 'declined' : d.is_error ? 'error' : 'done';
  if ('exit_code' in d) c.exitCode = num(d.exit_code) ?? null;
  if ('duration_ms' in d) c.durationMs = num(d.duration_ms) ?? null;
  if (d.timed_out) c.timedOut = true;
}

function pauseOf(d: Record<string, unknown>): RunPause {
  return {
    reason: str(d.reason) as RunPause['reason'],
    timeout_at: str(d.timeout_at) ?? null,
    details: (d.details ?? {}) as RunPause['details'],
  };
}

/** Folds events (in order, each once) into the turn's view. */
export function foldRun(events: readonly RunEvent[]): TurnView {
  const steps = new Map<number, StepView>();
  const view: TurnView = { status: 'queued', steps: [] };
  for (const { type, data: d } of events) {
    switch (type) {
      case 'run.started':
      case 'run.resumed':
        view.status = 'running';
        view.pause = undefined;
        if (type === 'run.resumed') applyResumed(steps, d);
        break;
      case 'message.delta': {
        view.status = 'running';
        const s = stepOf(steps, num(d.step) ?? 1);
        s.text += str(d.text) ?? '';
        break;
      }
      case 'message.restarted': {
        const s = stepOf(steps, num(d.step) ?? 1);
        s.text = '';
        s.restarted = true;
        break;
      }
      case 'message.completed': {
        const s = stepOf(steps, num(d.step) ?? 1);
        s.text = str(d.content) ?? s.text;
        s.complete = true;
        if ('structured' in d) s.structured = d.structured;
        if (d.invalid) s.invalid = d.errors ?? true;
        break;
      }
      case 'tool_call.created':
        callOf(steps, d);
        break;
      case 'tool_call.started': {
        const c = callOf(steps, d);
        if (c.state !== 'done' && c.state !== 'error') c.state = 'running';
        if (str(d.command) && !c.arguments) c.arguments = JSON.stringify({ code: d.command });
        break;
      }
      case 'tool_call.completed':
        applyCompleted(steps, d);
        break;
      case 'run.paused':
        // An approval's pause says only its status; every other reason says it too.
        view.status = PAUSED.has(str(d.status) ?? '') ? (d.status as TurnStatus) : 'awaiting_approval';
        view.pause = pauseOf(d);
        for (const p of Array.isArray(d.pending) ? (d.pending as Array<Record<string, unknown>>) : []) {
          const c = callOf(steps, p);
          if (c.state === 'requested') c.state = 'awaiting_approval';
        }
        break;
      case 'run.completed':
        view.pause = undefined;
        view.status = 'completed';
        view.output = (d.output as TurnView['output']) ?? undefined;
        view.usage = d.usage as TurnView['usage'];
        break;
      case 'run.failed':
        view.status = 'failed';
        view.error = d.error as TurnView['error'];
        view.usage = d.usage as TurnView['usage'];
        break;
      case 'run.cancelled':
        view.status = 'cancelled';
        view.error = (d.error as TurnView['error']) ?? undefined;
        break;
      default:
        break;
    }
  }
  view.steps = [...steps.values()].sort((a, b) => a.step - b.step);
  return view;
}

/** The calls still waiting for a person's decision. */
export function pendingCalls(view: TurnView): ToolCallView[] {
  return view.steps.flatMap((s) => s.calls.filter((c) => c.state === 'awaiting_approval'));
}

export const isLive = (s: TurnStatus) => s === 'queued' || s === 'running' || isPaused(s);

/** A sandbox call's result: `{stdout, stderr, exit_code, duration_ms}` as JSON text. */
export interface SandboxResult {
  stdout?: string;
  stderr?: string;
  exit_code?: number;
  duration_ms?: number;
  error?: string;
}

export function sandboxResult(output: string | undefined): SandboxResult | undefined {
  if (!output) return undefined;
  try {
    const v: unknown = JSON.parse(output);
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}
