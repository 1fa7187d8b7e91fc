import { describe, expect, it } from 'vitest';
import { noTemporal } from '../../helpers/services.js';
import { sentMessages, waitFor, useSessionWorld } from './session-harness.js';

const skip = noTemporal();

describe.skipIf(skip)('session life cycle: continue-as-new and idle completion', () => {
  const world = useSessionWorld({ SESSION_IDLE_TIMEOUT_MS: '2000', SESSION_CONTINUE_AS_NEW_TURNS: '2' });

  it('carries the conversation across continue-as-new and idle completion, and a retried message_id is never a second turn', async () => {
    const agent = await world.fx.agent({}, 'Be brief.');
    const conversationId = `c-life-${Date.now()}`;
    const say = async (message: string, message_id?: string) => {
      const res = await world.fx.converse({
        agent_id: agent.id,
        conversation_id: conversationId,
        message,
        ...(message_id ? { message_id } : {}),
      });
      expect(res.body.data.status, res.text).toBe('completed');
      return res.body.data;
    };
    world.fx.vendor.script(
      { reply: { text: 'r1' } },
      { reply: { text: 'r2' } },
      { reply: { text: 'r3' } },
      { reply: { text: 'r4' } },
    );
    const t1 = await say('m1', 'msg-1');
    const handle = world.client.workflow.getHandle(t1.workflow_id);
    const firstRunId = (await handle.describe()).runId;
    await say('m2');
    // Two turns in one run: the workflow continued as new, carrying only ids and counters.
    await waitFor(
      async () => ((await handle.describe()).runId !== firstRunId ? true : undefined),
      10_000,
      'continue-as-new',
    );
    const old = await world.client.workflow.getHandle(t1.workflow_id, firstRunId).describe();
    expect(old.status.name).toBe('CONTINUED_AS_NEW');
    await say('m3');
    expect(sentMessages(world.fx.vendor, 2).slice(1)).toEqual([
      { role: 'user', content: 'm1' },
      { role: 'assistant', content: 'r1' },
      { role: 'user', content: 'm2' },
      { role: 'assistant', content: 'r2' },
      { role: 'user', content: 'm3' },
    ]);

    // Idle past SESSION_IDLE_TIMEOUT_MS: the workflow completes.
    const idle = await waitFor(
      async () => {
        const d = await handle.describe();
        return d.status.name === 'COMPLETED' ? d : undefined;
      },
      20_000,
      'idle completion',
    );
    expect(await world.client.workflow.getHandle(t1.workflow_id, idle.runId).result()).toEqual({ turns: 3 });

    // The first message again, after the workflow completed: the same run, no model call.
    const calls = world.fx.vendor.received.length;
    const again = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: conversationId,
      message: 'm1',
      message_id: 'msg-1',
    });
    expect(again.body.data.run_id).toBe(t1.run_id);
    expect(world.fx.vendor.received).toHaveLength(calls);

    // The next message starts the session again and the conversation carries on.
    const t4 = await say('m4');
    expect(t4.thread_id).toBe(t1.thread_id);
    expect((await handle.describe()).runId).not.toBe(idle.runId);
    expect(
      sentMessages(world.fx.vendor, 3)
        .slice(1)
        .map((m) => m.content),
    ).toEqual(['m1', 'r1', 'm2', 'r2', 'm3', 'r3', 'm4']);
  });
});
