import { TaskState, type StreamResponse, type Task, type TaskStatus } from '@a2a-js/sdk';
import type { RunEvent } from '../../../core/repositories/run-events.repository.js';
import type { RunView } from '../../../core/runs/run-view.js';
import { ANSWER_ARTIFACT, answerArtifact, taskStatus, textPart } from '../../../core/a2a/task-view.js';

/** The run's events that end an A2A stream: the run ended, or waits for someone. */
export const STREAM_END: ReadonlySet<string> = new Set([
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.paused',
]);

/** The run's view when an event needs what it says (the pause's details, the answer). */
export type ViewReader = () => Promise<RunView>;

const status = (
  task: Pick<Task, 'id' | 'contextId'>,
  s: TaskStatus,
  metadata?: Record<string, unknown>,
): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: { taskId: task.id, contextId: task.contextId, status: s, metadata },
  },
});

const working = (): TaskStatus => ({
  state: TaskState.TASK_STATE_WORKING,
  message: undefined,
  timestamp: new Date().toISOString(),
});

/**
 * A run's events as A2A stream responses: text as chunks of the `answer`
 * artifact (sent whole again when the run completes, replacing what was
 * streamed, which may include the text of steps before a tool call), tool
 * calls as WORKING status updates, and the last status (COMPLETED, FAILED,
 * CANCELED, or the wait) once the run stops.
 */
export class TaskStream {
  private chunks = 0;

  constructor(
    private readonly task: Pick<Task, 'id' | 'contextId'>,
    private readonly view: ViewReader,
  ) {}

  async render(ev: RunEvent): Promise<StreamResponse[]> {
    const d = ev.data;
    switch (ev.type) {
      case 'run.started':
      case 'run.resumed':
        return [status(this.task, working(), { event: ev.type })];
      case 'message.delta':
        return [this.chunk(typeof d.text === 'string' ? d.text : '', this.chunks++ > 0)];
      case 'message.restarted':
        this.chunks = 1;
        return [this.chunk('', false)];
      case 'tool_call.started':
      case 'tool_call.completed':
        return [status(this.task, working(), { event: ev.type, tool_call: { id: d.id, name: d.name } })];
      case 'run.completed': {
        const view = await this.view();
        const out: StreamResponse[] = [];
        if (view.output)
          out.push({
            payload: {
              $case: 'artifactUpdate',
              value: {
                taskId: this.task.id,
                contextId: this.task.contextId,
                artifact: answerArtifact(view.output),
                append: false,
                lastChunk: true,
                metadata: undefined,
              },
            },
          });
        out.push(status(this.task, taskStatus(view)));
        return out;
      }
      case 'run.paused':
      case 'run.failed':
      case 'run.cancelled':
        return [status(this.task, taskStatus(await this.view()))];
      default:
        return [];
    }
  }

  private chunk(text: string, append: boolean): StreamResponse {
    return {
      payload: {
        $case: 'artifactUpdate',
        value: {
          taskId: this.task.id,
          contextId: this.task.contextId,
          artifact: {
            artifactId: ANSWER_ARTIFACT,
            name: 'answer',
            description: '',
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
          },
          append,
          lastChunk: false,
          metadata: undefined,
        },
      },
    };
  }
}
