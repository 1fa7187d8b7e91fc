import { describe, expect, it } from 'vitest';
import { sessionStateQuery } from '../../../workflows/session.definitions.js';
import { noTemporal } from '../../helpers/services.js';
import {
  CONVERSE,
  readSse,
  sentMessages,
  startFixture,
  waitFor,
  useSessionWorld,
} from './session-harness.js';

const skip = noTemporal();

describe.skipIf(skip)('converse: one session workflow per agent + conversation', () => {
  const world = useSessionWorld();

  it('answers a multi-turn conversation with the whole history, and records it in Postgres and Temporal', async () => {
    const agent = await world.fx.agent({}, 'You are {{role}}.');
    world.fx.vendor.script(
      { reply: { text: 'Hi Ada.', usage: { input: 20, output: 3 } } },
      { reply: { text: 'Your name is Ada.', usage: { input: 40, output: 5 } } },
    );
    const first = await world.fx.converse({
      agent_id: agent.id,
      message: 'My name is Ada.',
      context: { role: 'a helpful tutor' },
      namespace: 'tenant-a',
    });
    expect(first.status).toBe(200);
    const run1 = first.body.data;
    expect(run1).toMatchObject({
      status: 'completed',
      output: { role: 'assistant', content: 'Hi Ada.' },
      usage: { input_tokens: 20, output_tokens: 3 },
      warnings: [],
      workflow_id: `session/${agent.id}/${run1.conversation_id}`,
    });
    expect(run1.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(run1.temporal_ui_url).toContain(encodeURIComponent(run1.workflow_id));

    const second = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: run1.conversation_id,
      message: 'What is my name?',
    });
    const run2 = second.body.data;
    expect(run2).toMatchObject({
      status: 'completed',
      output: { content: 'Your name is Ada.' },
      thread_id: run1.thread_id,
    });
    // Later turns keep the stored context and see the whole thread.
    expect(sentMessages(world.fx.vendor, 1)).toEqual([
      { role: 'system', content: 'You are a helpful tutor.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hi Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);

    const messages = await world.fx.api.request<Array<{ role: string; content: unknown; usage?: unknown }>>(
      'GET',
      `/api/agent-server/threads/${run1.thread_id}/messages`,
    );
    expect(messages.body.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Hi Ada.'],
      ['user', 'What is my name?'],
      ['assistant', 'Your name is Ada.'],
    ]);

    // The operator's view: search attributes, memo and the Query.
    const handle = world.client.workflow.getHandle(run1.workflow_id);
    const description = await handle.describe();
    expect(description.taskQueue).toBe(world.fx.env.TEMPORAL_TASK_QUEUE);
    expect(description.memo).toEqual({ agent_name: expect.any(String) as string });
    const sa = description.searchAttributes as Record<string, unknown[]>;
    expect(sa.ProjectId).toEqual([world.fx.projectId]);
    expect(sa.AgentId).toEqual([agent.id]);
    expect(sa.ConversationId).toEqual([run1.conversation_id]);
    expect(sa.Namespace).toEqual(['tenant-a']);
    expect(await handle.query(sessionStateQuery)).toMatchObject({
      status: 'idle',
      current_turn: 2,
      queued_run_ids: [],
    });

    const conv = await world.fx.api.request<{ workflow_id: string; temporal_ui_url: string }>(
      'GET',
      `/api/agent-server/conversations/${run1.conversation_id}?project_id=${world.fx.projectId}`,
    );
    expect(conv.body.data.workflow_id).toBe(run1.workflow_id);
    expect(conv.body.data.temporal_ui_url).toBe(run1.temporal_ui_url);
  });

  it('streams deltas before the model has finished, numbered from 1, and the run can be replayed', async () => {
    const agent = await world.fx.agent();
    world.fx.vendor.script({
      reply: { text: 'one two three four', usage: { input: 5, output: 4 } },
      hold: true,
    });
    let firstDeltaAt = 0;
    const events = await world.fx.stream(
      { agent_id: agent.id, message: 'count', context: { role: 'x' } },
      (ev) => {
        if (ev.event === 'message.delta' && !firstDeltaAt) {
          firstDeltaAt = ev.at;
          // The vendor holds the rest of its answer until we have seen the first delta.
          world.fx.vendor.release();
        }
      },
    );
    expect(firstDeltaAt).toBeGreaterThan(0);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ event: 'run.created', data: { status: 'queued' } });
    const deltas = events.filter((e) => e.event === 'message.delta');
    expect(deltas.map((d) => d.data.text).join('')).toBe('one two three four');
    expect(deltas[0]!.data.text).toBe('one ');
    expect(events.at(-2)).toMatchObject({
      event: 'message.completed',
      data: { content: 'one two three four' },
    });
    expect(events.at(-1)).toMatchObject({
      event: 'run.completed',
      data: { usage: { input_tokens: 5, output_tokens: 4 } },
    });

    // Resume after the second event: the same frames, from the third on.
    const runId = (events[0]!.data as { run_id: string }).run_id;
    const replay = await readSse(`${world.fx.api.url}/api/agent-server/runs/${runId}/events`, {
      headers: { 'last-event-id': '2' },
    });
    expect(replay.map((e) => [e.id, e.event, e.data])).toEqual(
      events.slice(2).map((e) => [e.id, e.event, e.data]),
    );
    const viaQuery = await readSse(
      `${world.fx.api.url}/api/agent-server/runs/${runId}/events?after=${events.length - 1}`,
      {},
    );
    expect(viaQuery.map((e) => e.event)).toEqual(['run.completed']);
  });

  it('a failed model call ends the turn as failed, with the reason, in a 200', async () => {
    const agent = await world.fx.agent();
    world.fx.vendor.script({ error: { status: 400, message: 'context too long for the scripted model' } });
    const res = await world.fx.converse({ agent_id: agent.id, message: 'hello', context: { role: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'failed',
      error: { code: 'model_bad_request', message: expect.stringContaining('context too long') as string },
      output: null,
    });
    // A bad request is not retried.
    expect(world.fx.vendor.received).toHaveLength(1);
  });

  it('retries a model call that failed transiently, within the same turn', async () => {
    const agent = await world.fx.agent();
    world.fx.vendor.script(
      { error: { status: 503, message: 'overloaded' } },
      { reply: { text: 'recovered' } },
    );
    const res = await world.fx.converse({ agent_id: agent.id, message: 'hello', context: { role: 'x' } });
    expect(res.body.data).toMatchObject({ status: 'completed', output: { content: 'recovered' } });
    expect(world.fx.vendor.received).toHaveLength(2);
  });

  it('records a warning for a template variable that is still missing, and renders it empty', async () => {
    const agent = await world.fx.agent({}, 'You help {{customer}} with {{product}}.');
    const res = await world.fx.converse({ agent_id: agent.id, message: 'hi', context: { customer: 'Bo' } });
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.warnings).toEqual([expect.stringContaining('"product"')]);
    expect(sentMessages(world.fx.vendor, 0)[0]).toEqual({ role: 'system', content: 'You help Bo with .' });
  });

  it('pins the prompt version by label at turn start and records it on the run and the assistant message', async () => {
    const agent = await world.fx.agent({ prompt_label: 'production' }, 'Version one.', {
      label: 'production',
    });
    const p = `/api/agent-server/prompts/${agent.promptName}`;
    const v1 = await world.fx.api.request<{ id: string }>(
      'GET',
      `${p}/versions/1?project_id=${world.fx.projectId}`,
    );
    const first = await world.fx.converse({ agent_id: agent.id, message: 'a' });
    expect(first.body.data.prompt_version_id).toBe(v1.body.data.id);

    // A new version does not move "production" ...
    await world.fx.api.request('POST', `${p}/versions?project_id=${world.fx.projectId}`, {
      template: 'Version two.',
      commit_message: 'v2',
    });
    const second = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: first.body.data.conversation_id,
      message: 'b',
    });
    expect(sentMessages(world.fx.vendor, 1)[0]).toEqual({ role: 'system', content: 'Version one.' });
    // ... moving the label does, from the next turn on.
    const moved = await world.fx.api.request('PATCH', `${p}/versions/2?project_id=${world.fx.projectId}`, {
      label: 'production',
    });
    expect(moved.status).toBe(200);
    const third = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: first.body.data.conversation_id,
      message: 'c',
    });
    expect(sentMessages(world.fx.vendor, 2)[0]).toEqual({ role: 'system', content: 'Version two.' });
    expect(second.body.data.prompt_version_id).toBe(v1.body.data.id);
    expect(third.body.data.prompt_version_id).not.toBe(v1.body.data.id);
    const rows = await world.fx.api.server.deps
      .db('messages')
      .where({ run_id: third.body.data.run_id, role: 'assistant' })
      .select('prompt_version_id');
    expect(rows).toEqual([{ prompt_version_id: third.body.data.prompt_version_id }]);
  });

  it('is idempotent by message_id: the same id twice concurrently is one turn; different content is a 409', async () => {
    const agent = await world.fx.agent();
    const body = {
      agent_id: agent.id,
      conversation_id: `c-${Date.now()}`,
      message_id: 'm-1',
      message: 'once',
      context: { role: 'x' },
    };
    const [a, b] = await Promise.all([world.fx.converse(body), world.fx.converse(body)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.data.run_id).toBe(b.body.data.run_id);
    expect(a.body.data.status).toBe('completed');
    expect(b.body.data.status).toBe('completed');
    expect(world.fx.vendor.received).toHaveLength(1);
    const again = await world.fx.converse(body);
    expect(again.body.data.run_id).toBe(a.body.data.run_id);
    expect(world.fx.vendor.received).toHaveLength(1);
    const other = await world.fx.converse({ ...body, message: 'something else' });
    expect(other.status).toBe(409);
    expect(other.body.errorDetails).toMatchObject({ field: 'message_id' });
    const count = await world.fx.api.server.deps
      .db('messages')
      .where({ thread_id: a.body.data.thread_id })
      .count<{ count: string }[]>('* as count');
    expect(Number(count[0]!.count)).toBe(2);
  });

  it('answers 404 for an unknown project or agent, or an agent of another project; 400 for bad input', async () => {
    const agent = await world.fx.agent();
    const unknownProject = await world.fx.api.request(
      'POST',
      `${CONVERSE}?project_id=00000000-0000-4000-8000-000000000000`,
      {
        agent_id: agent.id,
        message: 'x',
      },
    );
    expect(unknownProject.status).toBe(404);
    const unknownAgent = await world.fx.converse({
      agent_id: '00000000-0000-4000-8000-000000000000',
      message: 'x',
    });
    expect(unknownAgent.status).toBe(404);
    const other = await startFixture(world.fx.env, world.fx.api);
    const foreign = await other.agent();
    expect((await world.fx.converse({ agent_id: foreign.id, message: 'x' })).status).toBe(404);
    await other.close();
    for (const bad of [
      {},
      { agent_id: agent.id },
      { agent_id: agent.id, message: '' },
      { agent_id: agent.id, message: [] },
      { agent_id: agent.id, message: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] },
      { agent_id: agent.id, message: 'x', conversation_id: 'has spaces' },
      { agent_id: agent.id, message: 'x', message_id: '' },
      { agent_id: 'nope', message: 'x' },
    ]) {
      const res = await world.fx.converse(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.errorDetails.fields?.length).toBeGreaterThan(0);
    }
    expect(world.fx.vendor.received).toHaveLength(0);
  });

  it('GET /runs/{id} returns the result after the client left, and 404 for an unknown run', async () => {
    const agent = await world.fx.agent();
    world.fx.vendor.script({ reply: { text: 'slow answer' }, firstByteDelayMs: 300 });
    const controller = new AbortController();
    let runId = '';
    await readSse(
      `${world.fx.api.url}${CONVERSE}?project_id=${world.fx.projectId}`,
      {
        method: 'POST',
        body: { agent_id: agent.id, message: 'hi', context: { role: 'x' }, stream: true },
        signal: controller.signal,
      },
      (ev) => {
        if (ev.event === 'run.created') {
          runId = (ev.data as { run_id: string }).run_id;
          controller.abort();
        }
      },
    ).catch(() => undefined);
    expect(runId).not.toBe('');
    const done = await waitFor(async () => {
      const r = await world.fx.api.request<{ status: string; output: { content: string } }>(
        'GET',
        `/api/agent-server/runs/${runId}`,
      );
      return r.body.data.status === 'completed' ? r.body.data : undefined;
    });
    expect(done.output.content).toBe('slow answer');
    expect(
      (await world.fx.api.request('GET', '/api/agent-server/runs/00000000-0000-4000-8000-000000000000'))
        .status,
    ).toBe(404);
    // The events endpoint: unknown run 404, a bad cursor 400 naming it, both before any stream starts.
    const events = `/api/agent-server/runs/${runId}/events`;
    expect(
      (
        await world.fx.api.request(
          'GET',
          '/api/agent-server/runs/00000000-0000-4000-8000-000000000000/events',
        )
      ).status,
    ).toBe(404);
    const badHeader = await world.fx.api.request('GET', events, undefined, { 'last-event-id': 'abc' });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.errorDetails.fields?.[0]?.field).toBe('Last-Event-ID');
    expect((await world.fx.api.request('GET', `${events}?after=-1`)).status).toBe(400);
    expect((await world.fx.api.request('GET', '/api/agent-server/runs/not-a-uuid')).status).toBe(400);
  });
});
