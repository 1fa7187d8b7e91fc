/**
 * The MCP tasks extension (`io.modelcontextprotocol/tasks`, protocol
 * revision 2026-07-28): a server may answer a `tools/call` with a task
 * (`resultType: "task"`, a flat CreateTaskResult) instead of the result; the
 * client then polls `tasks/get` until the task is terminal (a completed
 * task carries the tool's result inline) and may `tasks/cancel` it.
 *
 * The SDK's client knows none of this: it rejects a `resultType: "task"`
 * answer as an unsupported result type (without the answer), and sends the
 * `tasks/*` methods only with a result schema of the caller's. So:
 * - `TaskAwareClient` declares the extension in the per-request `_meta`
 *   capabilities of the 2026-07-28 wire (a 2025-era connection, whose
 *   `initialize` carries the capabilities, never hears of it), and keeps the
 *   task an answer created, read off the transport before the SDK drops it;
 * - `getTask` and `cancelTask` send the two methods with their schemas.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  SdkError,
  SdkErrorCode,
  type CallToolRequest,
  type CallToolRequestOptions,
  type CallToolResult,
  type ConnectOptions,
  type Transport,
} from '@modelcontextprotocol/client';
import { z } from 'zod';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** `working` and `input_required` go on; the others are terminal. */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type McpTaskStatus = (typeof TASK_STATUSES)[number];

const taskFields = {
  taskId: z.string().min(1),
  status: z.enum(TASK_STATUSES),
  statusMessage: z.string().optional(),
  createdAt: z.string().optional(),
  lastUpdatedAt: z.string().optional(),
  /** How long the server keeps the task from its creation (null: no limit). */
  ttlMs: z.number().int().positive().nullable().optional(),
  /** The server's suggested wait between polls. */
  pollIntervalMs: z.number().int().positive().optional(),
};

/** What a `tools/call` answered with a task carries (flat: the Result and the Task). */
export const CreatedTaskSchema = z.looseObject(taskFields);
export type CreatedTask = z.infer<typeof CreatedTaskSchema>;

/** `tasks/get`: the task, with the tool's result inline once completed, or the error that failed it. */
export const DetailedTaskSchema = z.looseObject({
  ...taskFields,
  result: z
    .looseObject({
      content: z.array(z.unknown()).optional(),
      structuredContent: z.unknown().optional(),
      isError: z.boolean().optional(),
    })
    .optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});
export type DetailedTask = z.infer<typeof DetailedTaskSchema>;

/** `tasks/cancel` answers an empty acknowledgement; the cancelled status shows at the next `tasks/get`. */
const CancelAckSchema = z.looseObject({});

/** Whether a call's answer is the task it created (see TaskAwareClient.callTool); the SDK strips `resultType` off results. */
export function isCreatedTask(value: object): value is CreatedTask {
  return (value as { resultType?: unknown }).resultType === 'task';
}

/** Whether `err` is the SDK's refusal of a `resultType: "task"` answer. */
function isTaskAnswer(err: unknown): boolean {
  return (
    err instanceof SdkError &&
    err.code === SdkErrorCode.UnsupportedResultType &&
    (err.data as { resultType?: unknown } | undefined)?.resultType === 'task'
  );
}

/**
 * A client that declares the tasks extension on the 2026-07-28 wire and
 * remembers the tasks its requests created.
 */
export class TaskAwareClient extends Client {
  /** The latest answer that created a task: the SDK rejects it right after it is read here. */
  private lastCreated: unknown;

  /** The per-request envelope (2026-07-28 only; undefined on a 2025-era connection) with the extension declared. */
  protected override _outboundMetaEnvelope(): Readonly<Record<string, unknown>> | undefined {
    const envelope = super._outboundMetaEnvelope();
    if (!envelope) return envelope;
    const capabilities = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as {
      extensions?: Record<string, unknown>;
    };
    return {
      ...envelope,
      [CLIENT_CAPABILITIES_META_KEY]: {
        ...capabilities,
        extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} },
      },
    };
  }

  /** Watches the transport's messages before the SDK does: a pre-set `onmessage` is chained by connect. */
  override async connect(transport: Transport, options?: ConnectOptions): Promise<void> {
    transport.onmessage = (message) => {
      const m = message as { id?: string | number; result?: { resultType?: unknown } };
      if (m.id === undefined || m.result?.resultType !== 'task') return;
      this.lastCreated = m.result;
    };
    return super.connect(transport, options);
  }

  /**
   * A call the server runs as a task answers with the task (`resultType:
   * "task"`, which isCreatedTask tells apart from a result).
   */
  override async callTool(
    params: CallToolRequest['params'],
    options?: CallToolRequestOptions,
  ): Promise<CallToolResult> {
    try {
      return await super.callTool(params, options);
    } catch (err) {
      const task = this.createdTask(err);
      if (task) return task as unknown as CallToolResult;
      throw err;
    }
  }

  /**
   * The task a request created, when `err` is the SDK's refusal of its
   * answer; undefined for any other error. Throws when the answer is not a
   * well-formed CreateTaskResult.
   */
  private createdTask(err: unknown): CreatedTask | undefined {
    if (!isTaskAnswer(err) || this.lastCreated === undefined) return undefined;
    const parsed = CreatedTaskSchema.safeParse(this.lastCreated);
    if (!parsed.success)
      throw new SdkError(SdkErrorCode.InvalidResult, `malformed task: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }
}

interface TaskRequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

function requestOptions(opts: TaskRequestOptions) {
  return { timeout: opts.timeoutMs ?? 30_000, ...(opts.signal ? { signal: opts.signal } : {}) };
}

/** `tasks/get`: the task as the server holds it now. */
export function getTask(
  client: Client,
  taskId: string,
  opts: TaskRequestOptions = {},
): Promise<DetailedTask> {
  return client.request(
    { method: 'tasks/get', params: { taskId } },
    DetailedTaskSchema,
    requestOptions(opts),
  );
}

/** `tasks/cancel`: asks the server to stop the task (acknowledged at once; idempotent). */
export async function cancelTask(
  client: Client,
  taskId: string,
  opts: TaskRequestOptions = {},
): Promise<void> {
  await client.request({ method: 'tasks/cancel', params: { taskId } }, CancelAckSchema, requestOptions(opts));
}

/** The bounds of the wait between two polls (the server's hint is kept within them). */
export interface TaskPollBounds {
  minMs: number;
  maxMs: number;
}

/** A call its server runs as a task (the MCP tasks extension): what is needed to follow it. */
export interface McpTaskStarted {
  kind: 'task';
  serverId: string;
  taskId: string;
  status: McpTaskStatus;
  /** The wait before the first poll: the server's hint within the bounds, else the shortest. */
  pollIntervalMs: number;
  /** How long the server keeps the task from its creation (null: no limit). */
  ttlMs: number | null;
  statusMessage?: string;
}

/** The task a call's answer created, as a caller that follows tasks gets it. */
export function taskStarted(serverId: string, task: CreatedTask, bounds: TaskPollBounds): McpTaskStarted {
  return {
    kind: 'task',
    serverId,
    taskId: task.taskId,
    status: task.status,
    pollIntervalMs: pollDelay(task.pollIntervalMs, bounds),
    ttlMs: task.ttlMs ?? null,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
  };
}

/** The wait before the next poll: the server's hint within our bounds, else the shortest. */
export function pollDelay(hintMs: number | undefined, bounds: { minMs: number; maxMs: number }): number {
  if (hintMs === undefined) return bounds.minMs;
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, hintMs));
}
