/**
 * The playground's stream handling (console/src/features/playground/): the
 * SSE parser however the bytes are cut, events kept once each, and the fold
 * of a run's events into the transcript (restarts, approvals, waits for
 * budget or a decision, sandbox results).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addEvent, EMPTY } from '../../console/src/features/playground/run-events.js';
import { parseSse, type SseFrame } from '../../console/src/features/playground/sse.js';
import {
  foldRun,
  pendingCalls,
  sandboxResult,
  type RunEvent,
} from '../../console/src/features/playground/transcript.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

async function frames(chunks: string[]): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const f of parseSse(streamOf(chunks))) out.push(f);
  return out;
}

const WIRE =
  ': keepalive\n\n' +
  'id: 1\nevent: run.created\ndata: {"run_id":"r1"}\n\n' +
  'id: 2\r\nevent: message.delta\r\ndata: {"step":1,"text":"héllo "}\r\n\r\n' +
  'id: 3\revent: message.delta\rdata:{"step":1,\rdata: "text":"wörld"}\r\r' +
  'id: 4\nevent: run.completed\ndata: {}\n\n' +
  'id: 5\nevent: cut\ndata: {"partial":';

describe('parseSse', () => {
  it('reads frames with LF, CRLF and CR line ends, comments and multi-line data; drops an unfinished frame', async () => {
    const got = await frames([WIRE]);
    expect(got.map((f) => [f.id, f.event])).toEqual([
      ['1', 'run.created'],
      ['2', 'message.delta'],
      ['3', 'message.delta'],
      ['4', 'run.completed'],
    ]);
    expect(JSON.parse(got[2]!.data)).toEqual({ step: 1, text: 'wörld' });
    expect(JSON.parse(got[1]!.data)).toEqual({ step: 1, text: 'héllo ' });
  });

  it('gives the same frames however the bytes are split (inside CRLF and multi-byte characters too)', async () => {
    const whole = await frames([WIRE]);
    const bytes = new TextEncoder().encode(WIRE);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
          const parts = points.slice(1).map((end, i) => bytes.slice(points[i], end));
          const stream = new ReadableStream<Uint8Array>({
            start(c) {
              for (const p of parts) c.enqueue(p);
              c.close();
            },
          });
          const out: SseFrame[] = [];
          for await (const f of parseSse(stream)) out.push(f);
          expect(out).toEqual(whole);
        },
      ),
      { numRuns: 200 },
    );
  });
});

const ev = (seq: number, type: string, data: Record<string, unknown> = {}): RunEvent => ({ seq, type, data });

describe('run events and the transcript', () => {
  it('keeps each event once: a resumed stream that repeats events shows no text twice', () => {
    const first = [ev(1, 'run.created'), ev(2, 'message.delta', { step: 1, text: 'Hel' })];
    const again = [
      ev(2, 'message.delta', { step: 1, text: 'Hel' }),
      ev(3, 'message.delta', { step: 1, text: 'lo' }),
    ];
    const held = [...first, ...again].reduce(addEvent, EMPTY);
    expect(held.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(foldRun(held.events).steps[0]!.text).toBe('Hello');
    expect(held.ended).toBe(false);
    expect(addEvent(held, ev(4, 'run.completed', { output: { content: 'Hello' } })).ended).toBe(true);
  });

  it('folds a turn with a restart, an approval and a sandbox command', () => {
    const sandboxOut = JSON.stringify({ stdout: 'hi\n', stderr: 'warn\n', exit_code: 3, duration_ms: 42 });
    const view = foldRun([
      ev(1, 'run.created'),
      ev(2, 'message.delta', { step: 1, text: 'draft' }),
      ev(3, 'message.restarted', { step: 1 }),
      ev(4, 'message.delta', { step: 1, text: 'Running it.' }),
      ev(5, 'message.completed', { step: 1, content: 'Running it.', tool_calls: [{ id: 'c1' }] }),
      ev(6, 'tool_call.created', {
        step: 1,
        id: 'c1',
        name: 'execute_bash_commands',
        arguments: '{"code":"echo hi"}',
      }),
      ev(7, 'tool_call.created', { step: 1, id: 'c2', name: 'whoami', arguments: '{}' }),
      ev(8, 'run.paused', {
        step: 1,
        pending: [
          { id: 'c1', step: 1 },
          { id: 'c2', step: 1 },
        ],
      }),
    ]);
    expect(view.status).toBe('awaiting_approval');
    expect(view.steps[0]!.text).toBe('Running it.');
    expect(pendingCalls(view).map((c) => c.id)).toEqual(['c1', 'c2']);

    const done = foldRun([
      ...[
        ev(6, 'tool_call.created', {
          step: 1,
          id: 'c1',
          name: 'execute_bash_commands',
          arguments: '{"code":"echo hi"}',
        }),
      ],
      ev(7, 'tool_call.created', { step: 1, id: 'c2', name: 'whoami', arguments: '{}' }),
      ev(8, 'run.paused', {
        step: 1,
        pending: [
          { id: 'c1', step: 1 },
          { id: 'c2', step: 1 },
        ],
      }),
      ev(9, 'run.resumed', { step: 1, approved: ['c1'], rejected: [{ id: 'c2', by: 'timeout' }] }),
      ev(10, 'tool_call.started', { step: 1, id: 'c1', name: 'execute_bash_commands', command: 'echo hi' }),
      ev(11, 'tool_call.completed', {
        step: 1,
        id: 'c1',
        name: 'execute_bash_commands',
        output: sandboxOut,
        is_error: false,
        exit_code: 3,
        duration_ms: 42,
      }),
      ev(12, 'tool_call.completed', {
        step: 1,
        id: 'c2',
        name: 'whoami',
        output: 'declined by user',
        is_error: true,
      }),
      ev(13, 'message.completed', { step: 2, content: '{"a":1}', structured: { a: 1 } }),
      ev(14, 'run.completed', {
        output: { content: '{"a":1}', structured: { a: 1 } },
        usage: { input_tokens: 5 },
      }),
    ]);
    const [c1, c2] = done.steps[0]!.calls;
    expect(c1).toMatchObject({ state: 'done', decision: 'approved', exitCode: 3, durationMs: 42 });
    expect(sandboxResult(c1!.output)).toEqual({
      stdout: 'hi\n',
      stderr: 'warn\n',
      exit_code: 3,
      duration_ms: 42,
    });
    expect(c2).toMatchObject({ state: 'declined', decision: 'rejected', decidedBy: 'timeout' });
    expect(done.status).toBe('completed');
    expect(done.output?.structured).toEqual({ a: 1 });
    expect(done.steps[1]!.structured).toEqual({ a: 1 });
  });

  it('folds a wait for budget or a decision as its own status, with no call awaiting approval', () => {
    const budget = [
      ev(1, 'run.started', {}),
      ev(2, 'run.paused', {
        status: 'awaiting_budget',
        step: 1,
        reason: 'budget',
        details: { scope: 'agent' },
      }),
    ];
    expect(foldRun(budget).status).toBe('awaiting_budget');
    expect(pendingCalls(foldRun(budget))).toEqual([]);
    const resumed = foldRun([
      ...budget,
      ev(3, 'run.resumed', { status: 'running', step: 1, reason: 'budget', by: 'budget_raised' }),
    ]);
    expect(resumed.status).toBe('running');
    const decision = foldRun([
      ev(1, 'run.paused', {
        status: 'awaiting_decision',
        step: 2,
        reason: 'decision',
        details: { call_id: 'c1' },
      }),
    ]);
    expect(decision.status).toBe('awaiting_decision');
  });

  it('marks an answer the schema refused, and a failed run', () => {
    const view = foldRun([
      ev(1, 'message.completed', { step: 1, content: 'nope', invalid: true, errors: ['must be object'] }),
      ev(2, 'run.failed', { error: { code: 'invalid_output', message: 'gave up' } }),
    ]);
    expect(view.steps[0]!.invalid).toEqual(['must be object']);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('invalid_output');
  });
});
