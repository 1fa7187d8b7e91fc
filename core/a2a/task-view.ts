/**
 * A run as an A2A task (statuses as task states, the user message and the
 * answer as history, the answer as the artifact): pure, so the A2A door
 * (api/protocols/a2a/) and the worker's push notifications (the webhook
 * deliveries of a task's push configs) say the same task.
 */
import {
  Role,
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type Task,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { RunStatus } from '../db/tables/index.js';
import type { RunView } from '../runs/run-view.js';

export const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/** Our stored user message (text, or content parts) as A2A parts. */
export function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return [textPart(content)];
  if (!Array.isArray(content)) return [];
  return (content as Array<Record<string, unknown>>).map((p) => {
    if (p.type === 'image_url') {
      const raw = (p.image_url as { url?: unknown } | undefined)?.url;
      const url = typeof raw === 'string' ? raw : '';
      return {
        content: { $case: 'url', value: url },
        metadata: undefined,
        filename: '',
        mediaType: 'image/*',
      };
    }
    return textPart(typeof p.text === 'string' ? p.text : JSON.stringify(p));
  });
}

/** An answer as A2A parts: its text, and its structured value when the agent has a schema. */
export function answerParts(output: { content: string; structured?: unknown }): Part[] {
  const parts = [textPart(output.content)];
  if (output.structured !== undefined)
    parts.push({
      content: { $case: 'data', value: output.structured },
      metadata: undefined,
      filename: '',
      mediaType: 'application/json',
    });
  return parts;
}

/** The artifact a task's answer is in (streamed into, then sent whole). */
export const ANSWER_ARTIFACT = 'answer';

/**
 * Our run statuses as A2A task states: every wait for a person is
 * INPUT_REQUIRED (an approval, an MCP server's question, a call's unknown
 * outcome, a budget), except an MCP server's authorization (AUTH_REQUIRED).
 */
export function taskState(status: RunStatus): TaskState {
  switch (status) {
    case 'queued':
      return TaskState.TASK_STATE_SUBMITTED;
    case 'running':
      return TaskState.TASK_STATE_WORKING;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'failed':
      return TaskState.TASK_STATE_FAILED;
    case 'cancelled':
      return TaskState.TASK_STATE_CANCELED;
    case 'awaiting_authorization':
      return TaskState.TASK_STATE_AUTH_REQUIRED;
    default:
      return TaskState.TASK_STATE_INPUT_REQUIRED;
  }
}

/** A2A task states as our statuses (ListTasks' filter). */
export function runStatuses(state: TaskState): RunStatus[] | undefined {
  switch (state) {
    case TaskState.TASK_STATE_UNSPECIFIED:
      return undefined;
    case TaskState.TASK_STATE_SUBMITTED:
      return ['queued'];
    case TaskState.TASK_STATE_WORKING:
      return ['running'];
    case TaskState.TASK_STATE_COMPLETED:
      return ['completed'];
    case TaskState.TASK_STATE_FAILED:
      return ['failed'];
    case TaskState.TASK_STATE_CANCELED:
      return ['cancelled'];
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return ['awaiting_authorization'];
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return ['awaiting_approval', 'awaiting_input', 'awaiting_decision', 'awaiting_budget'];
    default:
      return [];
  }
}

export function agentMessage(view: RunView, parts: Message['parts'], messageId: string): Message {
  return {
    messageId,
    contextId: view.conversation_id,
    taskId: view.run_id,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const data = (value: unknown): Message['parts'][number] => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

/** How to answer each wait with the next SendMessage on the task (a data part, or these words). */
const HOW_TO_ANSWER: Record<string, unknown> = {
  approval: {
    approved: 'true | false (every pending call)',
    or: { approved_call_ids: [], rejected_call_ids: [] },
  },
  input: { action: 'accept | decline | cancel', content: '{...} matching requested_schema (accept)' },
  decision: { action: 'retry | supply', result: { output: 'text (supply)', is_error: false } },
  budget: { action: 'resume | cancel' },
  authorization: 'authorize at details.authorization_url, then send any message on this task',
};

/**
 * Where to authorize, in the words too: a client that reads only the text
 * (or shows it to its person) still finds the URL.
 */
function authorizationSentence(details: Record<string, unknown>): string {
  const url = details.authorization_url;
  if (typeof url !== 'string') return 'The task waits for authorization';
  const kind = details.server_kind === 'a2a' ? 'A2A agent' : 'MCP server';
  const name = typeof details.server_name === 'string' ? ` "${details.server_name}"` : '';
  return `The ${kind}${name} needs authorization: open ${url} to authorize, then send any message on this task`;
}

/** What the task waits for, said to the client: a sentence and the wait's details. */
function pauseMessage(view: RunView): Message | undefined {
  const pause = view.pause;
  if (!pause) return undefined;
  const details =
    pause.reason === 'approval'
      ? {
          pending: view.pending_approvals.map((p) => ({ id: p.id, name: p.name, arguments: p.arguments })),
        }
      : pause.details;
  const sentence =
    pause.reason === 'approval'
      ? `Approve or reject: ${view.pending_approvals.map((p) => String(p.name)).join(', ')}`
      : pause.reason === 'authorization'
        ? authorizationSentence(pause.details)
        : `The task waits for ${pause.reason}`;
  return agentMessage(
    view,
    [
      textPart(sentence),
      data({
        reason: pause.reason,
        timeout_at: pause.timeout_at,
        details,
        answer: HOW_TO_ANSWER[pause.reason],
      }),
    ],
    `${view.run_id}:pause:${pause.since ?? ''}`,
  );
}

export function taskStatus(view: RunView): TaskStatus {
  const message =
    view.status === 'failed'
      ? agentMessage(view, [textPart(view.error?.message ?? 'the task failed')], `${view.run_id}:error`)
      : pauseMessage(view);
  return {
    state: taskState(view.status),
    message,
    timestamp: view.finished_at ?? view.started_at ?? view.created_at,
  };
}

export function answerArtifact(output: NonNullable<RunView['output']>): Artifact {
  return {
    artifactId: ANSWER_ARTIFACT,
    name: 'answer',
    description: '',
    parts: answerParts(output),
    metadata: undefined,
    extensions: [],
  };
}

export interface TaskOptions {
  /** The most recent messages kept in `history` (undefined: all; 0: none). */
  historyLength?: number | undefined;
  includeArtifacts?: boolean;
}

/** A run as an A2A task: the user message and the answer as history, the answer as the artifact. */
export function toTask(view: RunView, userContent: unknown, opts: TaskOptions = {}): Task {
  const history: Message[] = [
    {
      ...agentMessage(view, partsOf(userContent), view.message_id),
      role: Role.ROLE_USER,
    },
  ];
  if (view.output) history.push(agentMessage(view, answerParts(view.output), `${view.run_id}:answer`));
  const keep = opts.historyLength;
  return {
    id: view.run_id,
    contextId: view.conversation_id,
    status: taskStatus(view),
    artifacts: view.output && opts.includeArtifacts !== false ? [answerArtifact(view.output)] : [],
    history: keep === undefined ? history : keep <= 0 ? [] : history.slice(-keep),
    metadata: {
      status: view.status,
      usage: view.usage,
      ...(view.trace_id ? { trace_id: view.trace_id } : {}),
    },
  };
}
