import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import {
  CONVERSATIONS as C,
  createConversation,
  createPrompt,
  db,
  expectEnvelope,
  insertAgent,
  insertMessages,
  insertThread,
  randomBody,
  type ConversationData,
  type MessageData,
  type ThreadData,
} from '../helpers/factories/content.js';

const T = '/api/agent-server/threads';

describe('Conversations API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const listOf = async (projectId: string, extra = '') =>
    (await api.request<ConversationData[]>('GET', `${C}?project_id=${projectId}${extra}`)).body.data;

  it('creates, reads, updates and deletes a conversation with a client-chosen id', async () => {
    const project = await createProject(api);
    const id = `chat:${randomUUID()}.v1_a-b`;
    const created = await api.request<ConversationData>('POST', `${C}?project_id=${project.id}`, {
      id,
      namespace: 'support',
      context: { user: { name: 'Ada' }, plan: 'pro' },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      id,
      project_id: project.id,
      namespace: 'support',
      context: { user: { name: 'Ada' }, plan: 'pro' },
    });
    expect(Date.parse(created.body.data.created_at)).not.toBeNaN();

    const got = await api.request<ConversationData>('GET', `${C}/${encodeURIComponent(id)}`);
    // A get also names the conversation's sessions (none before the first converse call).
    expect(got.body.data).toEqual({
      ...created.body.data,
      workflow_id: null,
      temporal_ui_url: null,
      sessions: [],
    });

    const patched = await api.request<ConversationData>(
      'PATCH',
      `${C}/${encodeURIComponent(id)}?project_id=${project.id}`,
      { context: { plan: 'free' } },
    );
    expect(patched.status).toBe(200);
    // context is replaced, namespace kept.
    expect(patched.body.data).toMatchObject({ id, namespace: 'support', context: { plan: 'free' } });
    const renamed = await api.request<ConversationData>('PATCH', `${C}/${encodeURIComponent(id)}`, {
      namespace: 'sales',
    });
    expect(renamed.body.data).toMatchObject({ namespace: 'sales', context: { plan: 'free' } });

    const deleted = await api.request('DELETE', `${C}/${encodeURIComponent(id)}`);
    expect(deleted.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });
    expect((await api.request('GET', `${C}/${encodeURIComponent(id)}`)).status).toBe(404);
  });

  it('generates a UUID id and the default namespace when absent', async () => {
    const project = await createProject(api);
    const conv = await createConversation(api, project.id);
    expect(conv.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(conv).toMatchObject({ namespace: 'default', context: {} });
  });

  it('lists newest first, filtered by namespace and by agent, and pages', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const agentA = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const agentB = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const c1 = await createConversation(api, project.id, { namespace: 'web' });
    const c2 = await createConversation(api, project.id, { namespace: 'mobile' });
    const c3 = await createConversation(api, project.id, { namespace: 'web' });
    await insertThread(api, project.id, c1.id, agentA.id);
    await insertThread(api, project.id, c2.id, agentB.id);
    await insertThread(api, project.id, c3.id, agentA.id);
    await insertThread(api, project.id, c3.id, agentB.id);

    expect((await listOf(project.id)).map((c) => c.id)).toEqual([c3.id, c2.id, c1.id]);
    expect((await listOf(project.id, '&namespace=web')).map((c) => c.id)).toEqual([c3.id, c1.id]);
    expect((await listOf(project.id, `&agent_id=${agentB.id}`)).map((c) => c.id)).toEqual([c3.id, c2.id]);
    expect((await listOf(project.id, `&agent_id=${agentA.id}&namespace=web`)).map((c) => c.id)).toEqual([
      c3.id,
      c1.id,
    ]);
    expect(await listOf(project.id, `&agent_id=${randomUUID()}`)).toEqual([]);
    expect((await listOf(project.id, '&limit=1&offset=1')).map((c) => c.id)).toEqual([c2.id]);
    // Another project's conversations never show.
    const other = await createProject(api);
    await createConversation(api, other.id, { namespace: 'web' });
    expect((await listOf(project.id, '&namespace=web')).length).toBe(2);
  });

  it("lists a thread's summaries oldest first, each with the last message it stands for", async () => {
    const project = await createProject(api);
    const conv = await createConversation(api, project.id);
    const thread = await insertThread(api, project.id, conv.id);
    const ids = await insertMessages(api, thread, [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
    const empty = await api.request<unknown[]>('GET', `${T}/${thread}/summaries`);
    expect(empty.body).toMatchObject({ error: false, data: [] });
    const seqOf = async (id: string) =>
      (await db(api)('messages').where({ id }).first<{ seq: string }>('seq')).seq;
    for (const [through, content] of [
      [ids[2]!, 'later summary'],
      [ids[0]!, 'first summary'],
    ] as const)
      await db(api)('thread_summaries').insert({
        thread_id: thread,
        through_seq: await seqOf(through),
        content,
        usage: JSON.stringify({ input_tokens: 30, output_tokens: 5 }),
      });
    const res = await api.request<Array<{ content: string; through_message_id: string; usage: unknown }>>(
      'GET',
      `${T}/${thread}/summaries?project_id=${project.id}`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data.map((x) => [x.content, x.through_message_id])).toEqual([
      ['first summary', ids[0]],
      ['later summary', ids[2]],
    ]);
    expect(res.body.data[0]!.usage).toEqual({ input_tokens: 30, output_tokens: 5 });
    const other = await createProject(api);
    expect((await api.request('GET', `${T}/${thread}/summaries?project_id=${other.id}`)).status).toBe(404);
    expect((await api.request('GET', `${T}/${randomUUID()}/summaries`)).status).toBe(404);
    expect((await api.request('GET', `${T}/not-a-uuid/summaries`)).status).toBe(400);
  });

  it('lists threads and pages messages oldest first with after', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const agent = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const conv = await createConversation(api, project.id);
    const first = await insertThread(api, project.id, conv.id, agent.id);
    const second = await insertThread(api, project.id, conv.id);

    const threads = await api.request<ThreadData[]>('GET', `${C}/${conv.id}/threads`);
    expect(threads.status).toBe(200);
    expect(threads.body.data.map((t) => [t.id, t.conversation_id, t.agent_id])).toEqual([
      [second, conv.id, null],
      [first, conv.id, agent.id],
    ]);

    const ids = await insertMessages(api, first, [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        ],
        usage: { input_tokens: 12, output_tokens: 7 },
      },
      { role: 'tool', content: [{ type: 'text', text: '18°C' }], tool_call_id: 'call_1' },
      { role: 'assistant', content: 'It is 18°C.' },
    ]);
    await insertMessages(api, second, [{ role: 'user', content: 'other thread' }]);

    const all = await api.request<MessageData[]>('GET', `${T}/${first}/messages`);
    expect(all.body.data.map((m) => m.id)).toEqual(ids);
    expect(all.body.data[0]).toEqual({
      id: ids[0],
      thread_id: first,
      role: 'system',
      content: 'You are terse.',
      created_at: all.body.data[0]!.created_at,
    });
    expect(all.body.data[2]).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      ],
      usage: { input_tokens: 12, output_tokens: 7 },
    });
    expect(all.body.data[3]).toMatchObject({
      role: 'tool',
      content: [{ type: 'text', text: '18°C' }],
      tool_call_id: 'call_1',
    });
    expect(all.body.data[3]).not.toHaveProperty('tool_calls');

    const page1 = await api.request<MessageData[]>('GET', `${T}/${first}/messages?limit=2`);
    expect(page1.body.data.map((m) => m.id)).toEqual(ids.slice(0, 2));
    const page2 = await api.request<MessageData[]>('GET', `${T}/${first}/messages?limit=2&after=${ids[1]}`);
    expect(page2.body.data.map((m) => m.id)).toEqual(ids.slice(2, 4));
    const page3 = await api.request<MessageData[]>(
      'GET',
      `${T}/${first}/messages?limit=2&after=${ids[3]}&project_id=${project.id}`,
    );
    expect(page3.body.data.map((m) => m.id)).toEqual(ids.slice(4));
    const end = await api.request<MessageData[]>('GET', `${T}/${first}/messages?after=${ids[4]}`);
    expect(end.body.data).toEqual([]);

    // A cursor from another thread is the caller's mistake, named.
    const [foreign] = (await api.request<MessageData[]>('GET', `${T}/${second}/messages`)).body.data;
    const wrongCursor = await api.request('GET', `${T}/${first}/messages?after=${foreign!.id}`);
    expect(wrongCursor.status).toBe(400);
    expect(wrongCursor.body.errorDetails.fields?.map((f) => f.field)).toEqual(['after']);
    expect(
      (await api.request('GET', `${T}/${first}/messages?limit=201`)).body.errorDetails.fields?.[0]?.field,
    ).toBe('limit');
  });

  it('deletes threads and messages with the conversation', async () => {
    const project = await createProject(api);
    const conv = await createConversation(api, project.id);
    const keep = await createConversation(api, project.id);
    const thread = await insertThread(api, project.id, conv.id);
    const kept = await insertThread(api, project.id, keep.id);
    await insertMessages(api, thread, [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    await insertMessages(api, kept, [{ role: 'user', content: 'stay' }]);

    expect((await api.request('DELETE', `${C}/${conv.id}?project_id=${project.id}`)).status).toBe(200);
    expect(await db(api)('threads').where({ id: thread }).first()).toBeUndefined();
    expect(await db(api)('messages').where({ thread_id: thread }).count('* as n').first()).toEqual({ n: 0 });
    expect((await api.request('GET', `${T}/${thread}/messages`)).status).toBe(404);
    const survivors = await api.request<MessageData[]>('GET', `${T}/${kept}/messages`);
    expect(survivors.body.data.map((m) => m.content)).toEqual(['stay']);
  });

  it('resolves an id shared by two projects only with project_id', async () => {
    const a = await createProject(api);
    const b = await createProject(api);
    const id = `shared-${randomUUID()}`;
    await createConversation(api, a.id, { id, namespace: 'a' });
    expect((await api.request<ConversationData>('GET', `${C}/${id}`)).body.data.namespace).toBe('a');
    await createConversation(api, b.id, { id, namespace: 'b' });
    for (const [method, path, body] of [
      ['GET', `${C}/${id}`, undefined],
      ['PATCH', `${C}/${id}`, { namespace: 'changed' }],
      ['DELETE', `${C}/${id}`, undefined],
      ['GET', `${C}/${id}/threads`, undefined],
    ] as const) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(['project_id']);
    }
    const inB = await api.request<ConversationData>('GET', `${C}/${id}?project_id=${b.id}`);
    expect(inB.body.data).toMatchObject({ id, project_id: b.id, namespace: 'b' });
    expect(
      (await api.request<ConversationData>('GET', `${C}/${id}?project_id=${a.id}`)).body.data.namespace,
    ).toBe('a');
  });

  it.each([
    ['an id with a slash-free bad character', { id: 'has space' }, 'id'],
    ['an id with a non-ASCII letter', { id: 'café' }, 'id'],
    ['an id over 128 characters', { id: 'x'.repeat(129) }, 'id'],
    ['an empty id', { id: '' }, 'id'],
    ['a numeric id', { id: 12 }, 'id'],
    ['an unknown field', { topic: 'x' }, 'topic'],
    ['a context that is not an object', { context: ['a'] }, 'context'],
    ['a context key that is not a variable name', { context: { 'bad-key': 1 } }, 'context.bad-key'],
    ['a numeric namespace', { namespace: 3 }, 'namespace'],
  ])('rejects a create with %s (400 naming the field, nothing written)', async (_label, body, field) => {
    const project = await createProject(api);
    const res = await api.request('POST', `${C}?project_id=${project.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toContain(field);
    expect(await listOf(project.id)).toEqual([]);
  });

  it('answers random bodies and queries with the envelope, never a 5xx, and writes nothing on a 400', async () => {
    const project = await createProject(api);
    const conv = await createConversation(api, project.id);
    const snapshot = async () =>
      JSON.stringify(
        await db(api)('conversations').where({ project_id: project.id }).orderBy('pk').select('*'),
      );
    for (const [method, path, keys] of [
      ['POST', `${C}?project_id=${project.id}`, ['id', 'namespace', 'context']],
      ['PATCH', `${C}/${conv.id}`, ['namespace', 'context']],
    ] as const) {
      await fc.assert(
        fc.asyncProperty(randomBody([...keys]), async (body) => {
          const before = await snapshot();
          const status = expectEnvelope(await api.request(method, path, body));
          if (status === 400) expect(await snapshot()).toBe(before);
        }),
        { numRuns: 50 },
      );
    }
    const thread = await insertThread(api, project.id, conv.id);
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('after', 'limit', 'project_id', 'stray'), fc.string(), { maxKeys: 3 }),
        async (query) => {
          const qs = new URLSearchParams(query).toString();
          expectEnvelope(await api.request('GET', `${T}/${thread}/messages?${qs}`));
          expectEnvelope(await api.request('GET', `${C}/${conv.id}/threads?${qs}`));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('answers 400 for bad ids in the path and query, 404 for unknown ones, 409 for a duplicate id', async () => {
    const project = await createProject(api);
    const conv = await createConversation(api, project.id, { context: { a: 1 } });
    const badPath = await api.request('GET', `${C}/${encodeURIComponent('no spaces allowed')}`);
    expect(badPath.status).toBe(400);
    expect(badPath.body.errorDetails.fields?.[0]?.field).toBe('conversation_id');
    expect((await api.request('GET', `${T}/not-a-uuid/messages`)).body.errorDetails.fields?.[0]?.field).toBe(
      'id',
    );
    expect(
      (await api.request('GET', `${C}?project_id=${project.id}&agent_id=nope`)).body.errorDetails.fields?.[0]
        ?.field,
    ).toBe('agent_id');
    expect((await api.request('PATCH', `${C}/${conv.id}`, {})).status).toBe(400);
    const badPatch = await api.request('PATCH', `${C}/${conv.id}`, { context: 'x', id: 'renamed' });
    expect(badPatch.body.errorDetails.fields?.map((f) => f.field).sort()).toEqual(['context', 'id']);
    expect((await api.request<ConversationData>('GET', `${C}/${conv.id}`)).body.data.context).toEqual({
      a: 1,
    });

    const other = await createProject(api);
    for (const [method, path, body] of [
      ['GET', `${C}/does-not-exist`, undefined],
      ['PATCH', `${C}/does-not-exist`, { namespace: 'x' }],
      ['DELETE', `${C}/does-not-exist`, undefined],
      ['GET', `${C}/does-not-exist/threads`, undefined],
      ['GET', `${C}/${conv.id}?project_id=${other.id}`, undefined],
      ['GET', `${C}/${conv.id}?project_id=${randomUUID()}`, undefined],
      ['GET', `${C}?project_id=${randomUUID()}`, undefined],
      ['POST', `${C}?project_id=${randomUUID()}`, {}],
      ['GET', `${T}/${randomUUID()}/messages`, undefined],
    ] as const) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ error: true, message: 'Not found', status: 404 });
    }
    const thread = await insertThread(api, project.id, conv.id);
    expect((await api.request('GET', `${T}/${thread}/messages?project_id=${other.id}`)).status).toBe(404);

    const dup = await api.request('POST', `${C}?project_id=${project.id}`, { id: conv.id });
    expect(dup.status).toBe(409);
    expect(dup.body.errorDetails).toMatchObject({ field: 'id' });
    expect(await createConversation(api, other.id, { id: conv.id })).toMatchObject({
      id: conv.id,
      project_id: other.id,
    });
  });
});
