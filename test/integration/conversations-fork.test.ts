import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import {
  CONVERSATIONS as C,
  createConversation,
  createPrompt,
  db,
  insertAgent,
  insertMessages,
  insertThread,
  type ConversationData,
  type MessageData,
  type ThreadData,
} from '../helpers/factories/content.js';
import { SandboxCopyUnsupportedError } from '../../activities/sandbox/errors.js';
import type { SandboxManager } from '../../activities/sandbox/sandbox-manager.js';
import { createWorkspaceCopyActivities } from '../../activities/session/workspace-copy.js';
import { startWorker, type RunningWorker } from '../../activities/worker.js';
import { createDb, type Db } from '../../core/db/knex.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import { noTemporal } from '../helpers/services.js';
import { sentMessages, sessionEnv, useSessionWorld } from './sessions/session-harness.js';

const T = '/api/agent-server/threads';

type Forked = ConversationData & { sessions: Array<{ agent_id: string; thread_id: string }> };

const path = (id: string, projectId: string) => `${C}/${encodeURIComponent(id)}/fork?project_id=${projectId}`;

async function transcript(api: TestApi, conversationId: string, projectId: string) {
  const threads = await api.request<ThreadData[]>(
    'GET',
    `${C}/${encodeURIComponent(conversationId)}/threads?project_id=${projectId}`,
  );
  const messages = await Promise.all(
    threads.body.data.map(
      async (t) => (await api.request<MessageData[]>('GET', `${T}/${t.id}/messages`)).body.data,
    ),
  );
  return { threads: threads.body.data, messages };
}

describe('Fork a conversation over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  /** A conversation with one agent's four-message transcript and a summary of the first exchange. */
  async function world() {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const agent = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const conversation = await createConversation(api, project.id, {
      namespace: 'support',
      context: { role: 'a tutor' },
    });
    const threadId = await insertThread(api, project.id, conversation.id, agent.id);
    const ids = await insertMessages(api, threadId, [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hi Ada.', usage: { input_tokens: 5, output_tokens: 2 } },
      { role: 'user', content: 'What is my name?' },
      { role: 'assistant', content: 'Ada.' },
    ]);
    const seqs: number[] = await db(api)('messages').whereIn('id', ids).orderBy('seq').pluck('seq');
    await db(api)('thread_summaries').insert([
      { thread_id: threadId, through_seq: seqs[1]!, content: 'The user is Ada.' },
      { thread_id: threadId, through_seq: seqs[3]!, content: 'Ada asked her name.' },
    ]);
    return { project, prompt, agent, conversation, threadId, ids };
  }

  it('copies the transcript up to a middle message into a new conversation and leaves the original as it was', async () => {
    const w = await world();
    const before = await transcript(api, w.conversation.id, w.project.id);
    const res = await api.request<Forked>('POST', path(w.conversation.id, w.project.id), {
      at_message_id: w.ids[1],
    });
    expect(res.status).toBe(200);
    const fork = res.body.data;
    expect(fork.id).not.toBe(w.conversation.id);
    expect(fork).toMatchObject({
      project_id: w.project.id,
      namespace: 'support',
      context: { role: 'a tutor' },
    });
    expect(fork.sessions.map((s) => s.agent_id)).toEqual([w.agent.id]);

    const copied = await transcript(api, fork.id, w.project.id);
    expect(copied.threads).toHaveLength(1);
    expect(copied.messages[0]!.map((m) => [m.role, m.content])).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Hi Ada.'],
    ]);
    expect(copied.messages[0]![1]!.usage).toEqual({ input_tokens: 5, output_tokens: 2 });
    // New rows, not the original's.
    expect(copied.messages[0]!.map((m) => m.id)).not.toContain(w.ids[0]);
    // Only the summary that covers copied messages comes along, pointing at the copy.
    const summaries = await api.request<Array<{ content: string; through_message_id: string }>>(
      'GET',
      `${T}/${copied.threads[0]!.id}/summaries`,
    );
    expect(summaries.body.data.map((s) => [s.content, s.through_message_id])).toEqual([
      ['The user is Ada.', copied.messages[0]![1]!.id],
    ]);

    expect(await transcript(api, w.conversation.id, w.project.id)).toEqual(before);
  });

  it('copies the whole transcript without at_message_id, under the id the client chose', async () => {
    const w = await world();
    const id = `fork:${randomUUID()}`;
    const res = await api.request<Forked>('POST', path(w.conversation.id, w.project.id), {
      conversation_id: id,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(id);
    const copied = await transcript(api, id, w.project.id);
    expect(copied.messages[0]!.map((m) => m.content)).toEqual([
      'My name is Ada.',
      'Hi Ada.',
      'What is my name?',
      'Ada.',
    ]);

    const clash = await api.request('POST', path(w.conversation.id, w.project.id), { conversation_id: id });
    expect(clash.status).toBe(409);
    expect(clash.body.errorDetails).toMatchObject({ field: 'conversation_id' });
    const existing = await api.request('POST', path(w.conversation.id, w.project.id), {
      conversation_id: w.conversation.id,
    });
    expect(existing.status).toBe(409);
  });

  it('answers 404 for an unknown conversation or message, and 400 for a message of another conversation', async () => {
    const w = await world();
    const unknown = await api.request('POST', path(`nope-${randomUUID()}`, w.project.id), {});
    expect(unknown.status).toBe(404);
    const noMessage = await api.request('POST', path(w.conversation.id, w.project.id), {
      at_message_id: randomUUID(),
    });
    expect(noMessage.status).toBe(404);

    const other = await createConversation(api, w.project.id);
    const otherThread = await insertThread(api, w.project.id, other.id, w.agent.id);
    const [elsewhere] = await insertMessages(api, otherThread, [{ role: 'user', content: 'elsewhere' }]);
    const res = await api.request('POST', path(w.conversation.id, w.project.id), {
      at_message_id: elsewhere,
    });
    expect(res.status).toBe(400);
    expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(['at_message_id']);
    // Nothing was created by the refused forks.
    const conversations = await db(api)('conversations').where({ project_id: w.project.id }).pluck('id');
    expect(conversations).toHaveLength(2);
  });

  it('is scoped to the project: another project sees neither the conversation nor its messages', async () => {
    const w = await world();
    const stranger = await createProject(api);
    expect((await api.request('POST', path(w.conversation.id, stranger.id), {})).status).toBe(404);

    // A message of another project's conversation is unknown here, not "another conversation's".
    const mine = await createConversation(api, stranger.id);
    const mineThread = await insertThread(api, stranger.id, mine.id);
    await insertMessages(api, mineThread, [{ role: 'user', content: 'hello' }]);
    const res = await api.request('POST', path(mine.id, stranger.id), { at_message_id: w.ids[0] });
    expect(res.status).toBe(404);
  });

  it('asks which agent when several spoke, and forks the one named', async () => {
    const w = await world();
    const second = await insertAgent(api, w.project.id, { prompt_id: w.prompt.id });
    const secondThread = await insertThread(api, w.project.id, w.conversation.id, second.id);
    await insertMessages(api, secondThread, [{ role: 'user', content: 'To the second agent.' }]);

    const ambiguous = await api.request('POST', path(w.conversation.id, w.project.id), {});
    expect(ambiguous.status).toBe(400);
    const field = ambiguous.body.errorDetails.fields?.[0];
    expect(field?.field).toBe('agent_id');
    expect(field?.message).toContain(w.agent.id);
    expect(field?.message).toContain(second.id);

    const res = await api.request<Forked>('POST', path(w.conversation.id, w.project.id), {
      agent_id: second.id,
    });
    expect(res.status).toBe(200);
    const copied = await transcript(api, res.body.data.id, w.project.id);
    expect(copied.threads.map((t) => t.agent_id)).toEqual([second.id]);
    expect(copied.messages[0]!.map((m) => m.content)).toEqual(['To the second agent.']);

    // at_message_id names its thread; an agent_id that disagrees is refused.
    const mismatch = await api.request('POST', path(w.conversation.id, w.project.id), {
      at_message_id: w.ids[0],
      agent_id: second.id,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errorDetails.fields?.map((f) => f.field)).toEqual(['agent_id']);
  });
});

describe.skipIf(noTemporal())('Fork a conversation, then converse on the fork', () => {
  const world = useSessionWorld();

  it("the fork's next turn sends the vendor the copied messages, not the later ones", async () => {
    const agent = await world.fx.agent({}, 'You are {{role}}.');
    world.fx.vendor.script(
      { reply: { text: 'Hi Ada.' } },
      { reply: { text: 'Blue is nice.' } },
      { reply: { text: 'Your name is Ada.' } },
    );
    const first = await world.fx.converse({
      agent_id: agent.id,
      message: 'My name is Ada.',
      context: { role: 'a tutor' },
    });
    expect(first.status).toBe(200);
    const conversationId = first.body.data.conversation_id;
    await world.fx.converse({ agent_id: agent.id, conversation_id: conversationId, message: 'I like blue.' });
    const messages = await world.fx.api.request<MessageData[]>(
      'GET',
      `${T}/${first.body.data.thread_id}/messages`,
    );
    const hiAda = messages.body.data.find((m) => m.content === 'Hi Ada.')!;

    const fork = await world.fx.api.request<Forked>('POST', path(conversationId, world.fx.projectId), {
      at_message_id: hiAda.id,
    });
    expect(fork.status).toBe(200);
    const next = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: fork.body.data.id,
      message: 'What is my name?',
    });
    expect(next.body.data).toMatchObject({ status: 'completed', output: { content: 'Your name is Ada.' } });
    expect(next.body.data.workflow_id).toBe(`session/${agent.id}/${fork.body.data.id}`);
    expect(sentMessages(world.fx.vendor, 2)).toEqual([
      { role: 'system', content: 'You are a tutor.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hi Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
  });
});

/**
 * A sandbox backend that cannot copy a workspace, as the Kubernetes one does
 * when the session has a claim (its own refusal is tested against a real
 * kube-apiserver in sandbox/k8s-real.test.ts): here the fork's answer.
 */
describe.skipIf(noTemporal())(
  'Fork a sandbox agent’s conversation where the workspace cannot be copied',
  () => {
    const env = sessionEnv();
    let api: TestApi;
    let worker: RunningWorker;
    let workerDb: Db;
    const copies: string[] = [];
    const refusing = {
      backend: 'kubernetes',
      copyWorkspace(from: { conversationId: string }) {
        copies.push(from.conversationId);
        return Promise.reject(
          new SandboxCopyUnsupportedError('the kubernetes sandbox backend cannot copy a workspace'),
        );
      },
    } as unknown as SandboxManager;

    beforeAll(async () => {
      api = await startTestApi(env);
      const config = loadConfig({ ...env, PORT: '0' });
      workerDb = createDb(config.databaseUrl!);
      worker = await startWorker(config, createLogger('error'), workerDb, {
        activities: createWorkspaceCopyActivities({ logger: createLogger('error'), sandbox: refusing }),
      });
    });
    afterAll(async () => {
      await worker?.shutdown();
      await workerDb?.destroy();
      await api?.close();
    });

    it('answers 501 naming the workspace and makes no fork; an agent without a sandbox forks as before', async () => {
      const project = await createProject(api);
      const prompt = await createPrompt(api, project.id);
      const agent = await insertAgent(api, project.id, { prompt_id: prompt.id });
      await db(api)('agents')
        .where({ id: agent.id })
        .update({ sandbox: JSON.stringify({ enabled: true, require_approval: false }) });
      const conversation = await createConversation(api, project.id);
      const threadId = await insertThread(api, project.id, conversation.id, agent.id);
      await insertMessages(api, threadId, [{ role: 'user', content: 'Make a file.' }]);

      const res = await api.request('POST', path(conversation.id, project.id), {
        conversation_id: 'the-fork',
      });
      expect(res.status).toBe(501);
      expect(String(res.body.errorDetails.workspace)).toContain('cannot copy a workspace');
      expect(copies).toEqual([conversation.id]);
      const fork = await api.request('GET', `${C}/the-fork?project_id=${project.id}`);
      expect(fork.status).toBe(404);

      // The same conversation once the agent has no sandbox: nothing to copy, nothing asked of the worker.
      await db(api)('agents')
        .where({ id: agent.id })
        .update({ sandbox: JSON.stringify({ enabled: false, require_approval: false }) });
      const plain = await api.request('POST', path(conversation.id, project.id), {
        conversation_id: 'the-fork',
      });
      expect(plain.status).toBe(200);
      expect(copies).toHaveLength(1);
    });
  },
);
