/**
 * The A2A door's pure parts: our run statuses as A2A task states and back,
 * A2A message parts as converse content (and what is refused), a run view
 * as a Task (history, artifacts, the wait said to the client).
 */
import { Part, TaskState } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { describe, expect, it } from 'vitest';
import { converseContent } from '../../api/protocols/a2a/parts.js';
import { partsOf, runStatuses, taskState, toTask } from '../../core/a2a/task-view.js';
import { RUN_STATUSES } from '../../core/db/tables/index.js';
import { ValidationError } from '../../core/errors.js';
import type { RunView } from '../../core/runs/run-view.js';

const parts = (...json: object[]) => json.map((j) => Part.fromJSON(j));

function view(fields: Partial<RunView>): RunView {
  return {
    run_id: 'run-1',
    conversation_id: 'ctx-1',
    message_id: 'msg-1',
    status: 'completed',
    output: null,
    error: null,
    pause: null,
    pending_approvals: [],
    usage: { input_tokens: 1, output_tokens: 2 },
    trace_id: null,
    created_at: '2026-11-28T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    ...fields,
  } as RunView;
}

describe('A2A task states', () => {
  it('every run status is a task state, and each state filters back to the statuses shown as it', () => {
    for (const status of RUN_STATUSES) expect(runStatuses(taskState(status))).toContain(status);
    expect(taskState('awaiting_authorization')).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    for (const s of ['awaiting_approval', 'awaiting_input', 'awaiting_decision', 'awaiting_budget'] as const)
      expect(taskState(s)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(runStatuses(TaskState.TASK_STATE_UNSPECIFIED)).toBeUndefined();
    expect(runStatuses(TaskState.TASK_STATE_REJECTED)).toEqual([]);
  });
});

describe('A2A parts as converse content', () => {
  it('one text part is the text; data is its JSON; images by URL or bytes are images', () => {
    expect(converseContent(parts({ text: 'hello' }))).toBe('hello');
    expect(
      converseContent(
        parts(
          { text: 'look' },
          { data: { a: 1 } },
          { url: 'https://x.test/cat.png', mediaType: 'image/png' },
          { raw: Buffer.from('png').toString('base64'), mediaType: 'image/png' },
        ),
      ),
    ).toEqual([
      { type: 'text', text: 'look' },
      { type: 'text', text: '{"a":1}' },
      { type: 'image_url', image_url: { url: 'https://x.test/cat.png' } },
      {
        type: 'image_url',
        image_url: { url: `data:image/png;base64,${Buffer.from('png').toString('base64')}` },
      },
    ]);
  });

  it('refuses what the turn cannot read, naming the part', () => {
    const field = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        return err instanceof ValidationError ? err.fields[0]!.field : String(err);
      }
      return undefined;
    };
    expect(field(() => converseContent([]))).toBe('message.parts');
    expect(field(() => converseContent(parts({ text: '' })))).toBe('message.parts');
    expect(field(() => converseContent(parts({ metadata: {} })))).toBe('message.parts.0');
    expect(() =>
      converseContent(parts({ url: 'https://x.test/a.pdf', mediaType: 'application/pdf' })),
    ).toThrow(ContentTypeNotSupportedError);
  });

  it('our stored messages as parts', () => {
    expect(partsOf('hi').map((p) => p.content)).toEqual([{ $case: 'text', value: 'hi' }]);
    expect(
      partsOf([
        { type: 'text', text: 'a' },
        { type: 'image_url', image_url: { url: 'https://x.test/i.png' } },
      ]).map((p) => p.content),
    ).toEqual([
      { $case: 'text', value: 'a' },
      { $case: 'url', value: 'https://x.test/i.png' },
    ]);
  });
});

describe('a run as a Task', () => {
  it('completed: the user message and the answer as history, the answer (and its structured value) as the artifact', () => {
    const task = toTask(
      view({ output: { role: 'assistant', content: 'Paris', structured: { city: 'Paris' } } }),
      'Capital?',
    );
    expect(task).toMatchObject({ id: 'run-1', contextId: 'ctx-1', metadata: { status: 'completed' } });
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.history.map((m) => m.parts[0]!.content)).toEqual([
      { $case: 'text', value: 'Capital?' },
      { $case: 'text', value: 'Paris' },
    ]);
    expect(task.artifacts[0]!.parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: 'Paris' },
      { $case: 'data', value: { city: 'Paris' } },
    ]);
    expect(toTask(view({}), 'x', { historyLength: 0 }).history).toEqual([]);
  });

  it('a wait is said in the status message with how to answer it; a failure with its reason', () => {
    const waiting = toTask(
      view({
        status: 'awaiting_approval',
        pending_approvals: [{ id: 'call-1', name: 'echo', arguments: '{}' }],
        pause: { reason: 'approval', since: null, timeout_at: null, details: {} },
      }),
      'go',
    );
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [sentence, data] = waiting.status!.message!.parts;
    expect(sentence!.content).toEqual({ $case: 'text', value: 'Approve or reject: echo' });
    expect(data!.content).toMatchObject({
      $case: 'data',
      value: { reason: 'approval', details: { pending: [{ id: 'call-1', name: 'echo' }] } },
    });
    const failed = toTask(
      view({ status: 'failed', error: { code: 'model_error', message: 'the model refused' } }),
      'x',
    );
    expect(failed.status!.message!.parts[0]!.content).toEqual({ $case: 'text', value: 'the model refused' });
  });
});
