import { describe, expect, it } from 'vitest';
import { sessionStateQuery } from '../../../workflows/session.definitions.js';
import { createPrompt, createSchema } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { sentMessages, waitFor, type RunData, useSessionWorld } from './session-harness.js';

const skip = noTemporal();

describe.skipIf(skip)('one turn: history, summarizers, structured output, iterations, ordering', () => {
  const world = useSessionWorld();

  /** Sends the messages in order in one conversation; returns the runs. */
  async function talk(
    agentId: string,
    messages: string[],
    conversationId = `c-${Math.random()}`,
  ): Promise<RunData[]> {
    const runs: RunData[] = [];
    for (const message of messages) {
      const res = await world.fx.converse({ agent_id: agentId, conversation_id: conversationId, message });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.status, JSON.stringify(res.body.data.error)).toBe('completed');
      runs.push(res.body.data);
    }
    return runs;
  }

  it('sliding_window sends only the last N turns (the current one included)', async () => {
    const agent = await world.fx.agent(
      { summarizer_type: 'sliding_window', sliding_window_keep_count: 2 },
      'Be brief.',
    );
    world.fx.vendor.script({ reply: { text: 'r1' } }, { reply: { text: 'r2' } }, { reply: { text: 'r3' } });
    await talk(agent.id, ['m1', 'm2', 'm3']);
    expect(sentMessages(world.fx.vendor, 2)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'm2' },
      { role: 'assistant', content: 'r2' },
      { role: 'user', content: 'm3' },
    ]);
  });

  it('enable_history false sends only the current message', async () => {
    const agent = await world.fx.agent({ enable_history: false }, 'Be brief.');
    world.fx.vendor.script({ reply: { text: 'r1' } }, { reply: { text: 'r2' } });
    await talk(agent.id, ['m1', 'm2']);
    expect(sentMessages(world.fx.vendor, 1)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'm2' },
    ]);
  });

  it('llm: past the token threshold, older turns are summarized by the summarizer prompt, in their own activity', async () => {
    const summarizerPrompt = await createPrompt(world.fx.api, world.fx.projectId, {
      template: 'Summarize for {{role}}.',
    });
    const agent = await world.fx.agent(
      {
        summarizer_type: 'llm',
        llm_summarizer_token_threshold: 50,
        llm_summarizer_keep_recent_count: 1,
        llm_summarizer_prompt_id: summarizerPrompt.id,
      },
      'You are {{role}}.',
    );
    const conversationId = `c-llm-${Date.now()}`;
    world.fx.vendor.script(
      { reply: { text: 'r1', usage: { input: 10, output: 1 } } },
      { reply: { text: 'r2', usage: { input: 60, output: 1 } } },
      // Turn 3 starts with 60 reported input tokens ≥ 50: the summarizer call comes first.
      { reply: { text: 'S: the user said m1 and m2', usage: { input: 30, output: 8 } } },
      { reply: { text: 'r3', usage: { input: 20, output: 1 } } },
    );
    const first = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: conversationId,
      message: 'm1',
      context: { role: 'a scribe' },
    });
    expect(first.body.data.status).toBe('completed');
    const [, third] = await talk(agent.id, ['m2', 'm3'], conversationId);
    expect(world.fx.vendor.received).toHaveLength(4);
    // Turn 2 was under the threshold: whole history.
    expect(sentMessages(world.fx.vendor, 1)).toEqual([
      { role: 'system', content: 'You are a scribe.' },
      { role: 'user', content: 'm1' },
      { role: 'assistant', content: 'r1' },
      { role: 'user', content: 'm2' },
    ]);
    expect(sentMessages(world.fx.vendor, 2)).toEqual([
      { role: 'system', content: 'Summarize for a scribe.' },
      { role: 'user', content: 'user: m1\nassistant: r1\nuser: m2\nassistant: r2' },
    ]);
    expect(sentMessages(world.fx.vendor, 3)).toEqual([
      { role: 'system', content: 'You are a scribe.' },
      { role: 'system', content: 'Summary of the earlier conversation:\nS: the user said m1 and m2' },
      { role: 'user', content: 'm3' },
    ]);
    const summaries = await world.fx.api.server.deps
      .db('thread_summaries')
      .where({ thread_id: third!.thread_id })
      .select('content');
    expect(summaries).toEqual([{ content: 'S: the user said m1 and m2' }]);
    // The summarization is its own activity in the workflow's history.
    const history = await world.client.workflow.getHandle(third!.workflow_id).fetchHistory();
    const types = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    // Turn 3: its first model call finds the thread over the threshold, the summary is made, the call goes again.
    expect(types.slice(-3)).toEqual(['callModel', 'summarizeHistory', 'callModel']);
  });

  it('structured output: requested with the schema, validated, and returned parsed', async () => {
    const schema = await createSchema(world.fx.api, world.fx.projectId);
    const agent = await world.fx.agent({ schema_id: schema.id }, 'Answer in JSON.');
    world.fx.vendor.script({ reply: { text: '{"answer":"42"}' } });
    const res = await world.fx.converse({ agent_id: agent.id, message: 'meaning?' });
    expect(res.body.data).toMatchObject({
      status: 'completed',
      output: { content: '{"answer":"42"}', structured: { answer: '42' } },
    });
    const body = world.fx.vendor.received[0]!.body as {
      response_format?: { type: string; json_schema?: { schema: unknown } };
    };
    expect(body.response_format?.type).toBe('json_schema');
    expect(body.response_format?.json_schema?.schema).toEqual(schema.schema);
  });

  it('structured output: an invalid answer gets one corrective retry', async () => {
    const schema = await createSchema(world.fx.api, world.fx.projectId);
    const agent = await world.fx.agent({ schema_id: schema.id }, 'Answer in JSON.');
    world.fx.vendor.script({ reply: { text: '{"wrong":1}' } }, { reply: { text: '{"answer":"fixed"}' } });
    const res = await world.fx.converse({ agent_id: agent.id, message: 'q' });
    expect(res.body.data).toMatchObject({ status: 'completed', output: { structured: { answer: 'fixed' } } });
    const retry = sentMessages(world.fx.vendor, 1);
    expect(retry.slice(1, 3)).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '{"wrong":1}' },
    ]);
    expect(retry[3]!.role).toBe('user');
    expect(retry[3]!.content).toContain("must have required property 'answer'");
    // The corrective exchange stays out of later turns.
    world.fx.vendor.script({ reply: { text: '{"answer":"next"}' } });
    await world.fx.converse({
      agent_id: agent.id,
      conversation_id: res.body.data.conversation_id,
      message: 'q2',
    });
    expect(sentMessages(world.fx.vendor, 2).slice(1)).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '{"answer":"fixed"}' },
      { role: 'user', content: 'q2' },
    ]);
  });

  it('structured output: a second invalid answer fails the turn with the validation errors', async () => {
    const schema = await createSchema(world.fx.api, world.fx.projectId);
    const agent = await world.fx.agent({ schema_id: schema.id }, 'Answer in JSON.');
    world.fx.vendor.script({ reply: { text: 'not json' } }, { reply: { text: '{"answer":3}' } });
    const res = await world.fx.converse({ agent_id: agent.id, message: 'q' });
    expect(res.body.data.status).toBe('failed');
    expect(res.body.data.error?.code).toBe('schema_validation_failed');
    expect(res.body.data.error?.message).toContain('/answer must be string');
    expect(world.fx.vendor.received).toHaveLength(2);
  });

  it('max_iterations: a model that keeps calling tools ends the turn failed, and the transcript stays well-formed', async () => {
    const agent = await world.fx.agent({ max_iterations: 2 }, 'Use tools.');
    const call = { tool_calls: [{ name: 'lookup', arguments: { q: 'x' } }] };
    world.fx.vendor.script({ reply: call }, { reply: call }, { reply: { text: 'never asked' } });
    const res = await world.fx.converse({ agent_id: agent.id, message: 'go' });
    expect(res.body.data).toMatchObject({
      status: 'failed',
      error: { code: 'max_iterations', message: 'maximum iterations reached' },
    });
    expect(world.fx.vendor.received).toHaveLength(2);
    // Step 1's call was answered (no such tool), step 2's was answered as not run.
    expect(res.body.data.tool_calls).toEqual([
      expect.objectContaining({
        name: 'lookup',
        is_error: true,
        output: 'tool "lookup" is not available to this agent',
      }),
      expect.objectContaining({
        name: 'lookup',
        is_error: true,
        output: 'not run: maximum iterations reached',
      }),
    ]);
    const second = sentMessages(world.fx.vendor, 1);
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // The next turn still works: the history holds every call with its result.
    world.fx.vendor.script({ reply: { text: 'ok now' } });
    const next = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: res.body.data.conversation_id,
      message: 'again',
    });
    expect(next.body.data.status).toBe('completed');
  });

  it('turns run one at a time in arrival order: a message sent mid-turn waits its turn', async () => {
    const agent = await world.fx.agent({}, 'Be brief.');
    const conversationId = `c-order-${Date.now()}`;
    world.fx.vendor.script(
      { reply: { text: 'first answer' }, hold: true },
      { reply: { text: 'second answer' } },
    );
    const a = world.fx.converse({ agent_id: agent.id, conversation_id: conversationId, message: 'first' });
    await waitFor(
      () => (world.fx.vendor.received.length === 1 ? true : undefined),
      20_000,
      'the first model call',
    );
    const b = world.fx.converse({ agent_id: agent.id, conversation_id: conversationId, message: 'second' });
    const workflowId = `session/${agent.id}/${conversationId}`;
    const state = await waitFor(async () => {
      const s = await world.client.workflow.getHandle(workflowId).query(sessionStateQuery);
      return s.queued_run_ids.length === 1 ? s : undefined;
    });
    expect(state).toMatchObject({ status: 'running', pending_step: 'model_call', current_step: 1 });
    expect(world.fx.vendor.received).toHaveLength(1);
    world.fx.vendor.release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.body.data.output?.content).toBe('first answer');
    expect(rb.body.data.output?.content).toBe('second answer');
    // The second turn saw the first one whole, in order.
    expect(sentMessages(world.fx.vendor, 1).slice(1)).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second' },
    ]);
  });
});
