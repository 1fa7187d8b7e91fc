import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeltaWriter } from '../../../activities/session/delta-writer.js';
import { appendRunEvent, readRunEvents } from '../../../activities/session/run-store.js';
import { createDb, type Db } from '../../../api/db/knex.js';
import { databaseUrl } from '../../helpers/services.js';

/** The event log a retried model step writes, on real Postgres. */
describe('run events and the delta writer', () => {
  let db: Db;
  let threadId: string;
  let projectId: string;
  let conversationPk: string;

  beforeAll(async () => {
    db = createDb(databaseUrl());
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
    (await readRunEvents(db, runId, 0)).map((e): [number, string, string | null] => [
      e.seq,
      e.type,
      (e.data.text as string | undefined) ?? null,
    ]);

  it('numbers events 1, 2, 3 … per run, and a keyed event is written once', async () => {
    const runId = await newRun();
    expect(await appendRunEvent(db, runId, 'run.created', {}, 'created')).toBe(1);
    expect(await appendRunEvent(db, runId, 'run.created', {}, 'created')).toBeNull();
    const seqs = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        appendRunEvent(db, runId, 'message.delta', { step: 1, text: String(i) }),
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
});
