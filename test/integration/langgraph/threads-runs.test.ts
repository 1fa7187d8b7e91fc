/**
 * The Agent Protocol door driven by the official `@langchain/langgraph-sdk`
 * client against the real stack (Temporal, a worker, Postgres) with the
 * scripted vendor: threads are conversations, runs are converse turns, an
 * approval pause is an interrupt resumed with LangChain's decisions.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client } from '@langchain/langgraph-sdk';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { createModel } from '../../helpers/factories/config.js';
import { uniqueName } from '../../helpers/factories.js';
import { useSessionWorld, waitFor } from '../sessions/session-harness.js';

type Msg = {
  type: string;
  id: string;
  content: unknown;
  tool_calls?: Array<{ name: string; args: unknown }>;
};
type Values = { messages: Msg[]; __interrupt__?: Array<{ id: string; value: Record<string, unknown> }> };

describe('Agent Protocol: threads and runs through the LangGraph SDK', () => {
  const world = useSessionWorld();
  let client: Client;
  let base: string;
  let agentId: string;

  beforeAll(async () => {
    base = `${world.fx.api.url}/api/langgraph/${world.fx.projectId}`;
    client = new Client({ apiUrl: base });
    agentId = (await world.fx.agent()).id;
  });

  /** A protocol request outside the SDK, to see status codes and bodies as they are. */
  const raw = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  };

  it('wait: a run answers the thread values with LangChain messages; the thread and its state show them', async () => {
    world.fx.vendor.script({ reply: { text: 'Paris is the capital.' } });
    const thread = await client.threads.create({ metadata: { user: 'ada', topic: 'geo' } });
    const values = (await client.runs.wait(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'Capital of France?', id: 'human-1' }] },
    })) as Values;
    expect(values.messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'Capital of France?'],
      ['ai', 'Paris is the capital.'],
    ]);
    // The client's own message id is kept; each answer has its own.
    expect(values.messages[0]!.id).toBe('human-1');
    expect(values.messages[1]!.id).toMatch(/^run-/);

    const got = await client.threads.get(thread.thread_id);
    expect(got.status).toBe('idle');
    expect(got.metadata).toEqual({ user: 'ada', topic: 'geo' });
    expect((got.values as Values).messages).toHaveLength(2);

    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).toMatch(/^[0-9a-f-]{36}$/);
    const history = await client.threads.getHistory(thread.thread_id);
    // After the input, and after the answer.
    expect(history.map((h) => (h.values as Values).messages.length)).toEqual([2, 1]);
    expect(history[1]!.next).toEqual(['agent']);
    const older = await client.threads.getHistory(thread.thread_id, {
      before: { configurable: { checkpoint_id: history[0]!.checkpoint.checkpoint_id } },
    });
    expect(older.map((h) => h.checkpoint.checkpoint_id)).toEqual([history[1]!.checkpoint.checkpoint_id]);
    expect(history[0]!.parent_checkpoint?.checkpoint_id).toBe(history[1]!.checkpoint.checkpoint_id);

    const runs = await client.runs.list(thread.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'success', assistant_id: agentId, thread_id: thread.thread_id });
  });

  it('an assistant may be named by its agent name; input may be {role: "user"}', async () => {
    const name = uniqueName('lg-agent');
    const agent = await world.fx.agent({ name });
    world.fx.vendor.script({ reply: { text: 'by name' } });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, name, {
      input: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
    })) as Values;
    expect(values.messages.at(-1)!.content).toBe('by name');
    const [run] = await client.runs.list(thread.thread_id);
    expect(run!.assistant_id).toBe(name);
    expect(agent.id).toBeTruthy();
  });

  it('stream: metadata first, values, updates and token chunks (messages-tuple) sharing the answer id', async () => {
    world.fx.vendor.script({ reply: { text: 'one two three four five six' }, chunkDelayMs: 20 });
    const thread = await client.threads.create();
    const events: Array<{ event: string; data: unknown; id?: string }> = [];
    for await (const part of client.runs.stream(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'count' }] },
      streamMode: ['values', 'updates', 'messages-tuple', 'events'],
    }))
      events.push(part);
    expect(events[0]!.event).toBe('metadata');
    const runId = (events[0]!.data as { run_id: string }).run_id;
    const chunks = events.filter((e) => e.event === 'messages');
    expect(chunks.length).toBeGreaterThan(1);
    const text = chunks.map((c) => (c.data as [{ content: string }])[0].content).join('');
    expect(text).toBe('one two three four five six');
    const chunkIds = new Set(chunks.map((c) => (c.data as [{ id: string }])[0].id));
    expect(chunkIds.size).toBe(1);
    const final = events.filter((e) => e.event === 'values').at(-1)!.data as Values;
    expect(final.messages.at(-1)).toMatchObject({ type: 'ai', content: 'one two three four five six' });
    expect(chunkIds.has(final.messages.at(-1)!.id)).toBe(true);
    expect(events.find((e) => e.event === 'updates')!.data).toMatchObject({
      agent: { messages: [{ type: 'ai' }] },
    });
    const streamed = events
      .filter((e) => e.event === 'events')
      .map((e) => (e.data as { event: string }).event);
    expect(streamed).toContain('on_chat_model_stream');
    expect(streamed.at(-1)).toBe('on_chat_model_end');
    // Every event has an id the client can resume after.
    expect(events.every((e) => typeof e.id === 'string' && e.id.length > 0)).toBe(true);
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe('success');
  });

  it('the older messages mode: messages/metadata, then messages/partial with the answer so far', async () => {
    world.fx.vendor.script({ reply: { text: 'alpha beta gamma' }, chunkDelayMs: 20 });
    const thread = await client.threads.create();
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.stream(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'greek' }] },
      streamMode: 'messages',
    }))
      events.push(part);
    const kinds = events.map((e) => e.event).filter((e) => e.startsWith('messages/'));
    expect(kinds[0]).toBe('messages/metadata');
    const partials = events.filter((e) => e.event === 'messages/partial');
    expect(partials.length).toBeGreaterThan(1);
    expect((partials.at(-1)!.data as Msg[])[0]!.content).toBe('alpha beta gamma');
  });

  it('background run + join; a stream joined again after a disconnect resumes without repeats', async () => {
    world.fx.vendor.script({ reply: { text: 'held answer here' }, hold: true });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'slow' }] },
      streamMode: ['values', 'messages-tuple'],
    });
    expect(['pending', 'running']).toContain(run.status);
    // A first reader leaves after the first token.
    const controller = new AbortController();
    const first: Array<{ event: string; id?: string }> = [];
    try {
      for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, {
        signal: controller.signal,
      })) {
        first.push(part);
        if (part.event === 'messages') controller.abort();
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    const lastSeen = first.at(-1)!.id!;
    world.fx.vendor.release();
    const again: Array<{ event: string; id?: string }> = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: lastSeen }))
      again.push(part);
    const seenIds = new Set(first.map((e) => e.id));
    expect(again.some((e) => seenIds.has(e.id))).toBe(false);
    expect(again.some((e) => e.event === 'values')).toBe(true);
    // -1 replays from the first event.
    const all: Array<{ event: string }> = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }))
      all.push(part);
    expect(all[0]!.event).toBe('metadata');
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as Values;
    expect(joined.messages.at(-1)!.content).toBe('held answer here');
  });

  it('multitask: reject leaves no run, enqueue waits, interrupt and rollback cancel the run under way', async () => {
    const thread = await client.threads.create();
    world.fx.vendor.script({ reply: { text: 'first answer' }, hold: true });
    const first = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'first' }] },
    });
    await waitFor(async () => (await client.threads.get(thread.thread_id)).status === 'busy');
    const refused = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: agentId,
      input: { messages: [{ type: 'human', content: 'double text' }] },
      multitask_strategy: 'reject',
    });
    expect(refused.status).toBe(422);
    expect(String(refused.body!.detail)).toMatch(/already running/);
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);

    world.fx.vendor.script({ reply: { text: 'queued answer' } });
    const queued = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'second' }] },
      multitaskStrategy: 'enqueue',
    });
    expect(queued.status).toBe('pending');
    world.fx.vendor.release();
    await client.runs.join(thread.thread_id, queued.run_id);
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');
    expect((await client.runs.get(thread.thread_id, queued.run_id)).status).toBe('success');

    // interrupt: the held run is cancelled (kept, interrupted), the new one answers.
    world.fx.vendor.rearm();
    world.fx.vendor.script(
      { reply: { text: 'to be interrupted' }, hold: true },
      { reply: { text: 'after interrupt' } },
    );
    const slow = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'third' }] },
    });
    await waitFor(async () => (await client.runs.get(thread.thread_id, slow.run_id)).status === 'running');
    const interrupting = (await client.runs.wait(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'fourth' }] },
      multitaskStrategy: 'interrupt',
    })) as Values;
    expect(interrupting.messages.at(-1)!.content).toBe('after interrupt');
    expect((await client.runs.get(thread.thread_id, slow.run_id)).status).toBe('interrupted');
    world.fx.vendor.release();

    // rollback: the held run is gone (404 here), its message out of the thread.
    world.fx.vendor.rearm();
    world.fx.vendor.script(
      { reply: { text: 'to be rolled back' }, hold: true },
      { reply: { text: 'after rollback' } },
    );
    const doomed = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'fifth (rolled back)' }] },
    });
    await waitFor(async () => (await client.runs.get(thread.thread_id, doomed.run_id)).status === 'running');
    const rolled = (await client.runs.wait(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'sixth' }] },
      multitaskStrategy: 'rollback',
    })) as Values;
    world.fx.vendor.release();
    expect(rolled.messages.map((m) => m.content)).not.toContain('fifth (rolled back)');
    expect((await raw('GET', `/threads/${thread.thread_id}/runs/${doomed.run_id}`)).status).toBe(404);
    // Our own API keeps the row for the record.
    const ours = await world.fx.api.request<{ status: string; rolled_back: boolean; door: string }>(
      'GET',
      `/api/agent-server/runs/${doomed.run_id}`,
    );
    expect(ours.body.data).toMatchObject({ status: 'cancelled', rolled_back: true, door: 'langgraph' });
  });

  it('cancel with interrupt keeps the run (interrupted); with rollback it is gone', async () => {
    const thread = await client.threads.create();
    world.fx.vendor.script({ reply: { text: 'never finished' }, hold: true });
    const run = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'cancel me' }] },
    });
    await waitFor(async () => (await client.runs.get(thread.thread_id, run.run_id)).status === 'running');
    await client.runs.cancel(thread.thread_id, run.run_id, true, 'interrupt');
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');
    world.fx.vendor.release();

    world.fx.vendor.rearm();
    world.fx.vendor.script({ reply: { text: 'rolled' }, hold: true });
    const second = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'roll me back' }] },
    });
    await waitFor(async () => (await client.runs.get(thread.thread_id, second.run_id)).status === 'running');
    await client.runs.cancel(thread.thread_id, second.run_id, true, 'rollback');
    world.fx.vendor.release();
    expect((await raw('GET', `/threads/${thread.thread_id}/runs/${second.run_id}`)).status).toBe(404);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => r.run_id)).toEqual([run.run_id]);
  });

  it('a stateless run answers from a throwaway thread', async () => {
    world.fx.vendor.script({ reply: { text: 'stateless answer' } });
    const values = (await client.runs.wait(null, agentId, {
      input: { messages: [{ type: 'human', content: 'no thread' }] },
    })) as Values;
    expect(values.messages.at(-1)!.content).toBe('stateless answer');
  });

  it('threads: search by metadata and status, count, merge metadata on update, copy, delete', async () => {
    const tag = uniqueName('tag');
    const a = await client.threads.create({ metadata: { tag, n: 1 } });
    await client.threads.create({ metadata: { tag, n: 2 } });
    const found = await client.threads.search({ metadata: { tag, n: 1 } });
    expect(found.map((t) => t.thread_id)).toEqual([a.thread_id]);
    expect((await client.threads.search({ metadata: { tag }, status: 'idle' })).length).toBe(2);
    expect(await client.threads.count({ metadata: { tag } })).toBe(2);
    const updated = await client.threads.update(a.thread_id, { metadata: { extra: true } });
    expect(updated.metadata).toEqual({ tag, n: 1, extra: true });
    world.fx.vendor.script({ reply: { text: 'to copy' } });
    await client.runs.wait(a.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'copy this' }] },
    });
    const copy = await client.threads.copy(a.thread_id);
    expect(copy.thread_id).not.toBe(a.thread_id);
    expect((copy.values as Values).messages.map((m) => m.content)).toEqual(['copy this', 'to copy']);
    await client.threads.delete(a.thread_id);
    expect((await raw('GET', `/threads/${a.thread_id}`)).status).toBe(404);
  });

  it('after_seconds: the run is pending, untouched, until its time; then it runs once', async () => {
    world.fx.vendor.script({ reply: { text: 'later answer' } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, agentId, {
      input: { messages: [{ type: 'human', content: 'in a moment' }] },
      afterSeconds: 2,
    });
    expect(run.status).toBe('pending');
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('pending');
    expect(world.fx.vendor.received).toHaveLength(0);
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as Values;
    expect(values.messages.at(-1)!.content).toBe('later answer');
    expect(world.fx.vendor.received).toHaveLength(1);
  });

  it('on_disconnect: cancel stops the run its client left; continue (the default) lets it finish', async () => {
    for (const onDisconnect of ['cancel', 'continue'] as const) {
      world.fx.vendor.rearm();
      world.fx.vendor.script({ reply: { text: `left with ${onDisconnect}` }, hold: true });
      const thread = await client.threads.create();
      const controller = new AbortController();
      let runId = '';
      try {
        for await (const part of client.runs.stream(thread.thread_id, agentId, {
          input: { messages: [{ type: 'human', content: 'go' }] },
          streamMode: 'messages-tuple',
          onDisconnect,
          signal: controller.signal,
        })) {
          if (part.event === 'metadata') runId = (part.data as { run_id: string }).run_id;
          if (part.event === 'messages') controller.abort();
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
      }
      if (onDisconnect === 'cancel')
        await waitFor(async () => (await client.runs.get(thread.thread_id, runId)).status === 'interrupted');
      world.fx.vendor.release();
      const ended = await waitFor(async () => {
        const r = await client.runs.get(thread.thread_id, runId);
        return r.status === 'pending' || r.status === 'running' ? undefined : r;
      });
      expect(ended.status).toBe(onDisconnect === 'cancel' ? 'interrupted' : 'success');
    }
  });

  it("a run's webhook gets the run's end, signed (the secret comes back in Webhook-Secret)", async () => {
    const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      world.fx.vendor.script({ reply: { text: 'hooked' } });
      const thread = await client.threads.create();
      const res = await fetch(`${base}/threads/${thread.thread_id}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          assistant_id: agentId,
          input: { messages: [{ type: 'human', content: 'notify me' }] },
          webhook: url,
        }),
      });
      const secret = res.headers.get('webhook-secret')!;
      expect(secret).toMatch(/^whsec_/);
      const run = (await res.json()) as { run_id: string };
      const done = await waitFor(() =>
        received.find((r) => (JSON.parse(r.body) as { type: string }).type === 'run.completed'),
      );
      const payload = new Webhook(secret).verify(done.body, {
        'webhook-id': String(done.headers['webhook-id']),
        'webhook-timestamp': String(done.headers['webhook-timestamp']),
        'webhook-signature': String(done.headers['webhook-signature']),
      }) as { data: { run_id: string } };
      expect(payload.data.run_id).toBe(run.run_id);
    } finally {
      server.close();
    }
  });

  it('a budget pause is an interrupt naming its reason; a resume that still does not fit is a 409, cancel ends it', async () => {
    const model = await createModel(world.fx.api, world.fx.projectId, {
      provider_id: world.fx.providerId,
      model_id: uniqueName('gpt-budget'),
      pricing: { input_per_million_usd: 1_000, output_per_million_usd: 1_000 },
      max_output_tokens: 1_000,
    });
    const agent = await world.fx.agent({ model_id: model.id, budget: { max_usd: 0.01, period: 'day' } });
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, agent.id, {
      input: { messages: [{ type: 'human', content: 'expensive' }] },
    })) as Values;
    expect(paused.__interrupt__![0]!.value).toMatchObject({
      reason: 'budget',
      details: { scope: 'agent', id: agent.id, max_usd: 0.01 },
    });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(['agent']);
    const stillShort = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: agent.id,
      command: { resume: { action: 'resume' } },
    });
    expect(stillShort.status).toBe(409);
    await client.runs.create(thread.thread_id, agent.id, { command: { resume: { action: 'cancel' } } });
    const [run] = await waitFor(async () => {
      const runs = await client.runs.list(thread.thread_id);
      return runs[0]?.status === 'interrupted' &&
        (await client.threads.get(thread.thread_id)).status === 'idle'
        ? runs
        : undefined;
    });
    expect(run!.status).toBe('interrupted');
    expect(world.fx.vendor.received).toHaveLength(0);
  });

  describe('an approval pause is an interrupt', () => {
    let everything: RunningMcp;
    beforeAll(async () => {
      everything = await startEverythingServer('streamableHttp');
    }, 60_000);
    afterAll(async () => {
      await everything?.stop();
    });

    it('shows as LangChain human-in-the-loop and resumes with decisions, after a worker restart', async () => {
      const server = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('mcp'), endpoint: everything.url },
      );
      const agent = await world.fx.agent({
        mcp_servers: [
          { mcp_server_id: server.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
        ],
      });
      world.fx.vendor.script(
        { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved words' } }] } },
        { reply: { text: 'echoed it' } },
      );
      const thread = await client.threads.create();
      const paused = (await client.runs.wait(thread.thread_id, agent.id, {
        input: { messages: [{ type: 'human', content: 'echo please' }] },
      })) as Values;
      const interrupt = paused.__interrupt__![0]!;
      expect(interrupt.value).toMatchObject({
        actionRequests: [{ name: 'echo', args: { message: 'approved words' } }],
        reviewConfigs: [{ actionName: 'echo', allowedDecisions: ['approve', 'reject'] }],
      });
      const t = await client.threads.get(thread.thread_id);
      expect(t.status).toBe('interrupted');
      expect(Object.values(t.interrupts)[0]).toEqual([interrupt]);
      const state = await client.threads.getState(thread.thread_id);
      expect(state.next).toEqual(['tools']);
      expect(state.tasks[0]!.interrupts).toEqual([interrupt]);
      const [run] = await client.runs.list(thread.thread_id);
      expect(run!.status).toBe('interrupted');

      // A bad decision is the protocol's 422; nothing is decided.
      const bad = await raw('POST', `/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: agent.id,
        command: { resume: { decisions: [{ type: 'maybe' }] } },
      });
      expect(bad.status).toBe(422);

      await world.stopWorker();
      await world.restartWorker();
      const resumed = (await client.runs.wait(thread.thread_id, agent.id, {
        command: { resume: { decisions: [{ type: 'approve' }] } },
      })) as Values;
      expect(resumed.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(resumed.messages[2]!.content).toMatch(/approved words/);
      expect(resumed.messages.at(-1)!.content).toBe('echoed it');
      expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    });
  });

  it('bad input: 422 naming the field, 404 for what is not there, in the {detail} shape', async () => {
    const thread = await client.threads.create();
    const noInput = await raw('POST', `/threads/${thread.thread_id}/runs`, { assistant_id: agentId });
    expect(noInput.status).toBe(422);
    expect(JSON.stringify(noInput.body)).toMatch(/input\.messages/);
    const badMode = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: agentId,
      input: { messages: [{ type: 'human', content: 'x' }] },
      stream_mode: 'telepathy',
    });
    expect(badMode.status).toBe(422);
    expect((badMode.body!.detail as Array<{ loc: string[] }>)[0]!.loc).toContain('stream_mode');
    const aiInput = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: agentId,
      input: { messages: [{ type: 'ai', content: 'I am the model' }] },
    });
    expect(aiInput.status).toBe(422);
    expect((await raw('GET', '/threads/no-such-thread')).body).toEqual({ detail: 'Thread not found' });
    expect(
      (
        await raw('POST', '/threads/no-such-thread/runs', {
          assistant_id: agentId,
          input: { messages: [{ type: 'human', content: 'x' }] },
        })
      ).status,
    ).toBe(404);
    const noAssistant = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: 'nobody',
      input: { messages: [{ type: 'human', content: 'x' }] },
    });
    expect(noAssistant).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
    const resumeIdle = await raw('POST', `/threads/${thread.thread_id}/runs`, {
      assistant_id: agentId,
      command: { resume: { decisions: [] } },
    });
    expect(resumeIdle.status).toBe(409);
    const created = await raw('POST', '/threads', { thread_id: thread.thread_id });
    expect(created.status).toBe(409);
    const malformed = await fetch(`${base}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"metadata":',
    });
    expect(malformed.status).toBeLessThan(500);
    expect(await malformed.json()).toHaveProperty('detail');
    // if_not_exists: create makes the thread on the run.
    world.fx.vendor.script({ reply: { text: 'made' } });
    const fresh = `lg-${uniqueName('t')}`;
    const made = (await client.runs.wait(fresh, agentId, {
      input: { messages: [{ type: 'human', content: 'make it' }] },
      ifNotExists: 'create',
    })) as Values;
    expect(made.messages.at(-1)!.content).toBe('made');
  });
});
