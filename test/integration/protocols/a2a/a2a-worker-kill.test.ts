/**
 * An A2A task whose worker is killed mid-answer: the task is a durable run,
 * so another worker finishes it and the client's stream (and a
 * SubscribeToTask opened after the kill) end COMPLETED with the whole answer.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noTemporal } from '../../../helpers/services.js';
import {
  killHard,
  sessionEnv,
  spawnWorker,
  startFixture,
  type Fixture,
} from '../../sessions/session-harness.js';

const stateOf = (ev: StreamResponse | undefined) =>
  ev?.payload?.$case === 'statusUpdate' ? ev.payload.value.status?.state : undefined;

describe.skipIf(noTemporal())('A2A: a worker killed during a task', () => {
  let fx: Fixture;
  const env = sessionEnv();

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('another worker finishes the task; the stream and a resubscription end COMPLETED', async () => {
    const agent = await fx.agent({ expose: { a2a: true } }, 'Be brief.');
    const client = await new ClientFactory().createFromUrl(`${fx.api.url}/api/a2a/${agent.id}/`);
    fx.vendor.script({ reply: { text: 'cut short' }, hold: true }, { reply: { text: 'whole answer' } });
    const doomed = await spawnWorker(env);
    let survivor: Awaited<ReturnType<typeof spawnWorker>> | undefined;
    try {
      const request = SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] },
      });
      const events: StreamResponse[] = [];
      let taskId = '';
      const streaming = (async () => {
        for await (const ev of client.sendMessageStream(request)) {
          if (ev.payload?.$case === 'task') taskId = ev.payload.value.id;
          events.push(ev);
        }
      })();
      await fx.vendor.whenHeld();
      survivor = await spawnWorker(env);
      await killHard(doomed.child);
      // A second client follows the same task after the kill.
      const resubscribed: StreamResponse[] = [];
      for await (const ev of client.resubscribeTask({ tenant: '', id: taskId })) resubscribed.push(ev);
      await streaming;
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(stateOf(resubscribed.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      const task = await client.getTask({ tenant: '', id: taskId });
      expect(task.artifacts[0]!.parts[0]!.content).toEqual({ $case: 'text', value: 'whole answer' });
    } finally {
      fx.vendor.release();
      await killHard(doomed.child);
      if (survivor) await killHard(survivor.child);
    }
  }, 120_000);
});
