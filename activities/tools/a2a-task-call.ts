/**
 * One call of a remote A2A agent's skill, sent at most once and followed to
 * its end. Before anything is sent, the call's row (a2a_task_calls) records
 * the message id, derived from the run and the call, so every attempt sends
 * the same one (the protocol's idempotency hook); the remote task's id is
 * stored as soon as the remote names it. A retried attempt (the worker died)
 * with a task id follows that task (SubscribeToTask, or GetTask) instead of
 * sending; without one it looks for a task holding its message (ListTasks)
 * and only then sends the same message again.
 */
import { createHash } from 'node:crypto';
import {
  ListTasksRequest,
  SendMessageRequest,
  TaskState,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2aConnectionError, connectA2a, partsText, type A2aConnection } from '../../core/a2a/client.js';
import type { Db } from '../../core/db/knex.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';

export interface A2aTaskCall {
  conn: A2aConnection;
  a2aAgentId: string;
  /** The tool as the model called it (named in the answer to a question). */
  toolName: string;
  skillId: string;
  runId: string;
  /** `<step>:<call id>`. */
  callKey: string;
  text: string;
  /** A task of the remote that asked for input: this message answers it. */
  continueTaskId?: string;
  /** An earlier attempt of this call may have sent the message. */
  retried: boolean;
  timeoutMs: number;
  pollMs: number;
  signal: AbortSignal;
  /** Each state the remote task reaches (heartbeat details, progress). */
  onState: (state: string) => void;
  /**
   * Set when answering a question: the status message that asked it. Until
   * the remote has taken the answer, its task still shows that question,
   * which is not an outcome.
   */
  staleQuestionId?: string;
}

export interface A2aTaskResult {
  output: string;
  isError: boolean;
  task_id?: string;
  state?: string;
}

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
const INTERRUPTED = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);
const settled = (t: Task) => {
  const s = t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  return TERMINAL.has(s) || INTERRUPTED.has(s);
};
const stateName = (s: TaskState | undefined) => TaskState[s ?? TaskState.TASK_STATE_UNSPECIFIED] ?? 'UNKNOWN';

/** A UUID-shaped id from the run and the call: the same on every attempt. */
export function callMessageId(runId: string, callKey: string): string {
  const h = createHash('sha256').update(`a2a:${runId}:${callKey}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Sends (or resumes) the call and follows its task until it ends or asks for something. */
export async function runA2aTask(db: Db, call: A2aTaskCall): Promise<A2aTaskResult> {
  const repo = new A2aAgentsRepository(db);
  const row = await repo.claimCall({
    run_id: call.runId,
    call_key: call.callKey,
    a2a_agent_id: call.a2aAgentId,
    message_id: callMessageId(call.runId, call.callKey),
  });
  const { client, card } = await connectA2a(call.conn, { timeoutMs: 15_000, signal: call.signal });
  const streaming = Boolean(card.capabilities?.streaming);
  let taskId = row.task_id ?? undefined;
  const remember = async (id: string, contextId: string) => {
    if (taskId === id) return;
    taskId = id;
    await repo.rememberTask(call.runId, call.callKey, id, contextId);
  };
  const deadline = Date.now() + call.timeoutMs;
  try {
    if (!taskId && call.retried) {
      const found = await findTaskOf(client, row.message_id, call.signal);
      if (found) await remember(found.id, found.contextId);
    }
    // A stream is read until the call's deadline at most; then the task is read (and cancelled) below.
    const bounded = { ...call, signal: AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]) };
    try {
      if (!taskId) {
        const direct = await send(client, bounded, row.message_id, streaming, remember);
        call.staleQuestionId = bounded.staleQuestionId;
        if (direct) return { output: partsText(direct.parts) || '(an empty answer)', isError: false };
      } else if (streaming) await followStream(client, taskId, bounded);
    } catch (err) {
      if (call.signal.aborted || !bounded.signal.aborted || !taskId) throw err;
    }
    const task = await untilSettled(client, taskId!, call, deadline);
    if (!task) return timedOut(taskId!, call);
    return answerOf(task, call);
  } catch (err) {
    // The turn was cancelled: the remote task is asked to stop too (best effort).
    if (call.signal.aborted && taskId)
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }).catch(() => undefined);
    throw err;
  }
}

/** The message for the remote: the model's text, the skill as a hint, the task it answers if any. */
async function request(
  client: Client,
  call: A2aTaskCall,
  messageId: string,
  streaming: boolean,
): Promise<SendMessageRequest> {
  let contextId = '';
  if (call.continueTaskId) {
    const task = await client.getTask({ tenant: '', id: call.continueTaskId }, { signal: call.signal });
    contextId = task.contextId;
    call.staleQuestionId = task.status?.message?.messageId || undefined;
  }
  return SendMessageRequest.fromJSON({
    message: {
      messageId,
      role: 'ROLE_USER',
      parts: [{ text: call.text }],
      ...(call.continueTaskId ? { taskId: call.continueTaskId, contextId } : {}),
      metadata: { skill_id: call.skillId },
    },
    // Without a stream, the task's id comes back at once (and is stored) rather than when it ends.
    ...(streaming ? {} : { configuration: { returnImmediately: true } }),
  });
}

/** Sends the message: the remote's direct answer (a message), or undefined once it named its task. */
async function send(
  client: Client,
  call: A2aTaskCall,
  messageId: string,
  streaming: boolean,
  remember: (id: string, contextId: string) => Promise<void>,
): Promise<Message | undefined> {
  const req = await request(client, call, messageId, streaming);
  if (!streaming) {
    const result = await client.sendMessage(req, { signal: call.signal });
    if ('messageId' in result) return result;
    await remember(result.id, result.contextId);
    return undefined;
  }
  let named = false;
  for await (const ev of client.sendMessageStream(req, { signal: call.signal })) {
    const p = ev.payload;
    if (p?.$case === 'message' && !p.value.taskId) return p.value;
    const id = eventTask(ev);
    if (id) {
      named = true;
      await remember(id.taskId, id.contextId);
    }
    if (p?.$case === 'statusUpdate') call.onState(stateName(p.value.status?.state));
  }
  if (!named) throw new A2aConnectionError('the remote agent answered with neither a task nor a message');
  return undefined;
}

function eventTask(ev: StreamResponse): { taskId: string; contextId: string } | undefined {
  const p = ev.payload;
  if (!p) return undefined;
  if (p.$case === 'task') return { taskId: p.value.id, contextId: p.value.contextId };
  if (p.$case === 'statusUpdate' || p.$case === 'artifactUpdate')
    return { taskId: p.value.taskId, contextId: p.value.contextId };
  if (p.$case === 'message' && p.value.taskId)
    return { taskId: p.value.taskId, contextId: p.value.contextId };
  return undefined;
}

/** Follows a known task's stream (a retried attempt); a remote that refuses it is then polled. */
async function followStream(client: Client, taskId: string, call: A2aTaskCall): Promise<void> {
  try {
    for await (const ev of client.resubscribeTask({ tenant: '', id: taskId }, { signal: call.signal })) {
      if (ev.payload?.$case === 'statusUpdate') call.onState(stateName(ev.payload.value.status?.state));
    }
  } catch (err) {
    if (call.signal.aborted) throw err;
    // A task already ended cannot be subscribed to: GetTask reads it.
  }
}

/** Reads the task until it ends or asks for something, polling; past the deadline it is cancelled (undefined). */
async function untilSettled(
  client: Client,
  taskId: string,
  call: A2aTaskCall,
  deadline: number,
): Promise<Task | undefined> {
  for (;;) {
    const task = await client.getTask({ tenant: '', id: taskId }, { signal: call.signal });
    call.onState(stateName(task.status?.state));
    const stale = call.staleQuestionId && task.status?.message?.messageId === call.staleQuestionId;
    if (settled(task) && !stale) return task;
    if (Date.now() >= deadline) {
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }).catch(() => undefined);
      return undefined;
    }
    await sleep(call.pollMs, call.signal);
  }
}

/** A task of the remote whose history holds our message (an earlier attempt sent it and died). */
async function findTaskOf(client: Client, messageId: string, signal: AbortSignal): Promise<Task | undefined> {
  try {
    const page = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 100, historyLength: 20 }), {
      signal,
    });
    return page.tasks.find((t) => t.history.some((m) => m.messageId === messageId));
  } catch {
    // ListTasks is optional for a remote: sending the same message id again is the protocol's own answer.
    return undefined;
  }
}

/** What the model hears of the task's outcome. */
function answerOf(task: Task, call: A2aTaskCall): A2aTaskResult {
  const state = task.status?.state;
  const said = partsText(task.status?.message?.parts);
  const base = { task_id: task.id, state: stateName(state) };
  if (state === TaskState.TASK_STATE_COMPLETED) {
    const artifacts = task.artifacts
      .map((a) => partsText(a.parts))
      .filter(Boolean)
      .join('\n\n');
    return {
      ...base,
      output: artifacts || said || '(the remote agent completed without content)',
      isError: false,
    };
  }
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED)
    return {
      ...base,
      isError: false,
      output:
        `The remote agent needs more input before it can go on: ${said || '(it did not say what)'}\n` +
        `To answer, call ${call.toolName} again with {"message": <your answer>, "task_id": "${task.id}"}.`,
    };
  if (state === TaskState.TASK_STATE_AUTH_REQUIRED)
    return {
      ...base,
      isError: true,
      output: `the remote agent asks for authorization, which cannot be given from here: ${said || '(no details)'}`,
    };
  return {
    ...base,
    isError: true,
    output: `the remote task ended ${stateName(state)}${said ? `: ${said}` : ''}`,
  };
}

const timedOut = (taskId: string, call: A2aTaskCall): A2aTaskResult => ({
  task_id: taskId,
  state: 'TIMED_OUT',
  isError: true,
  output: `the remote task ${taskId} did not finish within ${Math.round(call.timeoutMs / 1000)} s and was cancelled`,
});

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });
}
