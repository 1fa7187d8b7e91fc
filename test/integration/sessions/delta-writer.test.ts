import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeltaWriter } from '../../../activities/session/delta-writer.js';
import { RunEventsRepository } from '../../../core/repositories/run-events.repository.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { databaseUrl } from '../../helpers/services.js';

/** The event log a retried model step writes, on real Postgres. */
describe('run events and the delta writer', () => {
  let db: Db;
  let runEvents: RunEventsRepository;
  let threadId: string;
  let projectId: string;
  let conversationPk: string;

  beforeAll(async () => {
    db = createDb(databaseUrl());
    runEvents = new RunEventsRepository(db);
    projectId = (
      await db('projects')
        .insert({ name: `dw-${randomUUID()}` })
        .returning('id')
    )[0]!.id;
    conversationPk = (
      await db('conversations').insert({ project_id: projectId, id: randomUUID() }).returning('pk')
    )[0]!.pk;
    threadId = (await db('threads').insert({ conversation_pk: conversationPk }).returning('id'))[0]!.id;
  });
  afterAll(async () => {
    await db?.destroy();
  });

  async function newRun(): Promise<string> {
    const rows: Array<{ id: string }> = await db('runs')
      .insert({
        project_id: projectId,
        conversation_pk: conversationPk,
        thread_id: threadId,
        message_id: randomUUID(),
        request_hash: 'x',
        workflow_id: 'session/x/y',
      })
      .returning('id');
    return rows[0]!.id;
  }
  const deltas = async (runId: string) =>
    (await runEvents.read(runId, 0)).map((e): [number, string, string | null] => [
      e.seq,
      e.type,
      (e.data.text as string | undefined) ?? null,
    ]);

  it('numbers events 1, 2, 3 … per run, and a keyed event is written once', async () => {
    const runId = await newRun();
    expect(await runEvents.append(runId, 'run.created', {}, 'created')).toBe(1);
    expect(await runEvents.append(runId, 'run.created', {}, 'created')).toBeNull();
    const seqs = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        runEvents.append(runId, 'message.delta', { step: 1, text: String(i) }),
      ),
    );
    expect(seqs.sort((a, b) => a! - b!)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('a retry repeating the earlier text sends only what is new', async () => {
    const runId = await newRun();
    const writer = new DeltaWriter(db, runId, 1, 'alpha beta ');
    for (const piece of ['alpha ', 'beta ', 'gamma']) writer.push(piece);
    await writer.close();
    expect(await deltas(runId)).toEqual([[1, 'message.delta', 'gamma']]);
  });

  it('a retry that diverges tells readers to start the step again, then sends the new answer whole', async () => {
    const runId = await newRun();
    const writer = new DeltaWriter(db, runId, 1, 'alpha beta');
    for (const piece of ['alpha ', 'delta']) writer.push(piece);
    await writer.close();
    const events = await deltas(runId);
    expect(events[0]).toEqual([1, 'message.restarted', null]);
    expect(
      events
        .slice(1)
        .map((e) => e[2])
        .join(''),
    ).toBe('alpha delta');
  });

  it('a retry whose answer stops inside the earlier text is a divergence too', async () => {
    const runId = await newRun();
    const writer = new DeltaWriter(db, runId, 1, 'alpha beta');
    writer.push('alpha');
    await writer.close();
    const events = await deltas(runId);
    expect(events.map((e) => e[1])).toEqual(['message.restarted', 'message.delta']);
    expect(events[1]![2]).toBe('alpha');
  });

  it('writes the first text on the next turn of the event loop, and finish hands back what is unsent', async () => {
    const runId = await newRun();
    const writer = new DeltaWriter(db, runId, 1, '');
    writer.push('Hel');
    writer.push('lo');
    // Text that arrived together goes out as one event, without being held for the end.
    for (let i = 0; i < 50 && (await deltas(runId)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await deltas(runId)).toEqual([[1, 'message.delta', 'Hello']]);
    writer.push(' there');
    const rest = await writer.finish();
    expect(rest).toEqual([{ type: 'message.delta', data: { step: 1, text: ' there' } }]);
    // Nothing more is written after finish.
    writer.push('!');
    await new Promise((r) => setTimeout(r, 50));
    expect(await deltas(runId)).toEqual([[1, 'message.delta', 'Hello']]);
  });

  it('an answer that arrived whole is handed back entirely by finish (no delta write of its own)', async () => {
    const runId = await newRun();
    const writer = new DeltaWriter(db, runId, 1, '');
    writer.push('all ');
    writer.push('at once');
    expect(await writer.finish()).toEqual([
      { type: 'message.delta', data: { step: 1, text: 'all at once' } },
    ]);
    expect(await deltas(runId)).toEqual([]);
  });

  it("stores a step's answer, usage, cost, outcome and events in one statement, and only once", async () => {
    const runId = await newRun();
    await runEvents.append(runId, 'run.created', {}, 'created');
    const step = (key: string) => ({
      runId,
      threadId,
      stepKey: key,
      message: {
        content: 'The answer.',
        tool_calls: null,
        usage: { input_tokens: 12, output_tokens: 3 },
        prompt_version_id: null,
        trace_id: null,
        hidden: false,
        metadata: { step: 1 },
      },
      usage: { input_tokens: 12, output_tokens: 3 },
      costUsd: 0.000021,
      reported: true,
      final: { output: { role: 'assistant' as const, content: 'The answer.' }, toolCalls: [] },
      correction: undefined,
      events: [
        { type: 'message.delta' as const, data: { step: 1, text: 'The answer.' } },
        { type: 'message.completed' as const, data: { step: 1, content: 'The answer.' }, key: '1.completed' },
        { type: 'run.completed' as const, data: { status: 'completed' }, key: 'final' },
      ],
    });
    const messageId = await runEvents.storeStep(step('1.assistant'));
    expect(messageId).toMatch(/^[0-9a-f-]{36}$/);
    // A retried attempt of the same step writes nothing.
    expect(await runEvents.storeStep(step('1.assistant'))).toBeUndefined();
    const events = await runEvents.read(runId, 0);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'run.created'],
      [2, 'message.delta'],
      [3, 'message.completed'],
      [4, 'run.completed'],
    ]);
    expect(events[2]!.data.message_id).toBe(messageId);
    expect(events[3]!.data.usage).toEqual({ input_tokens: 12, output_tokens: 3, cost_usd: 0.000021 });
    const run = (await db('runs').where({ id: runId }).first()) as Record<string, unknown>;
    expect(run).toMatchObject({
      status: 'completed',
      last_event_seq: 4,
      output: { role: 'assistant', content: 'The answer.' },
      // Added once, although the step was stored twice.
      usage: { input_tokens: 12, output_tokens: 3, cost_usd: 0.000021 },
    });
    expect(run.finished_at).toBeInstanceOf(Date);
    const thread = (await db('threads').where({ id: threadId }).first()) as { last_input_tokens: number };
    expect(thread.last_input_tokens).toBe(12);
  });

  it('retention prunes the stream events of long-finished runs, keeping each terminal event', async () => {
    const finished = async (daysAgo: number | null) => {
      const runId = await newRun();
      await runEvents.append(runId, 'run.created', {}, 'created');
      await runEvents.append(runId, 'message.delta', { step: 1, text: 'hi' });
      await runEvents.append(runId, 'run.completed', { status: 'completed' }, 'final');
      if (daysAgo !== null)
        await db('runs')
          .where({ id: runId })
          .update({ status: 'completed', finished_at: new Date(Date.now() - daysAgo * 86_400_000) });
      return runId;
    };
    const old = await finished(8);
    const recent = await finished(1);
    const running = await finished(null);
    await db('runs')
      .where({ id: running })
      .update({ created_at: new Date(Date.now() - 30 * 86_400_000) });
    expect(await runEvents.prune(7)).toBeGreaterThanOrEqual(2);
    expect((await deltas(old)).map((e) => e[1])).toEqual(['run.completed']);
    expect((await deltas(recent)).map((e) => e[1])).toEqual([
      'run.created',
      'message.delta',
      'run.completed',
    ]);
    expect((await deltas(running)).map((e) => e[1])).toEqual([
      'run.created',
      'message.delta',
      'run.completed',
    ]);
    // A second pass finds nothing more to do.
    expect(await runEvents.prune(7)).toBe(0);
  });
});
