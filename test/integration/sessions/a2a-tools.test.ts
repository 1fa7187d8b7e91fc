/**
 * Remote A2A agents as tools, on the real stack (API, PostgreSQL, Temporal,
 * a worker process; the scripted model vendor) against a real A2A server
 * built with the official SDK (test/fixtures/a2a-agents.ts): registering
 * and inspecting it, bad input refused naming the field, an agent whose
 * model calls a skill and answers with its result (at once, streamed, and
 * after the remote asked for input), and a worker killed mid-call: the
 * call resumes the same remote task and the message is sent once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../../helpers/factories.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { createDb } from '../../../core/db/knex.js';
import { SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { callMessageId, runA2aTask } from '../../../activities/tools/a2a-task-call.js';
import { startA2aTestAgent, type A2aTestAgent } from '../../fixtures/a2a-agents.js';
import { killHard, sessionEnv, spawnWorker, startFixture, type Fixture } from './session-harness.js';

type Worker = Awaited<ReturnType<typeof spawnWorker>>;
type ToolCallView = { name: string; output?: string; is_error?: boolean };
type ChatBody = { messages?: Array<{ role: string; content: unknown }> };

const A2A = '/api/agent-server/a2a-agents';

describe.skipIf(noTemporal())('remote A2A agents as tools', () => {
  let fx: Fixture;
  let remote: A2aTestAgent;
  let worker: Worker | undefined;
  // A dead worker's call is retried elsewhere within seconds.
  const env = sessionEnv({ SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '3000' });
  const token = 'Bearer remote-secret-token-1234567890';

  beforeAll(async () => {
    fx = await startFixture(env);
    remote = await startA2aTestAgent();
    worker = await spawnWorker(env);
  }, 90_000);
  afterAll(async () => {
    if (worker) await killHard(worker.child);
    await remote?.close();
    await fx?.close();
  });

  async function register(cardUrl = remote.cardUrl, name = uniqueName('remote')) {
    const res = await fx.api.request<{ id: string; name: string; headers: Record<string, string> }>(
      'POST',
      `${A2A}?project_id=${fx.projectId}`,
      { name, card_url: cardUrl, headers: { Authorization: token } },
    );
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  const toolCalls = async (runId: string) =>
    (await fx.api.request<{ tool_calls: ToolCallView[] }>('GET', `/api/agent-server/runs/${runId}`)).body.data
      .tool_calls;

  it('registers, shows headers redacted, inspects the card, refuses bad input naming the field', async () => {
    const created = await register();
    expect(created.headers).toEqual({ Authorization: '[redacted]' });
    const inspected = await fx.api.request<{
      skills: Array<{ id: string; tool: string }>;
      streaming: boolean;
    }>('POST', `${A2A}/${created.id}/inspect`);
    expect(inspected.status, inspected.text).toBe(200);
    expect(inspected.body.data.streaming).toBe(true);
    expect(inspected.body.data.skills.map((s) => s.id)).toEqual(['answer', 'stream', 'ask', 'hold']);
    expect(inspected.body.data.skills[0]!.tool).toBe(
      `${created.name.replace(/[^a-zA-Z0-9_-]/g, '_')}__answer`,
    );
    // The card was fetched with the configured header.
    expect(remote.authorizations).toContain(token);

    const bad = await fx.api.request('POST', `${A2A}?project_id=${fx.projectId}`, {
      name: uniqueName('remote'),
      card_url: 'not a url',
      colour: 'blue',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(true);
    const fields = (bad.body.errorDetails as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['card_url', 'colour']));

    const unknown = await fx.api.request('POST', `/api/agent-server/agents?project_id=${fx.projectId}`, {
      name: uniqueName('agent'),
      model_id: fx.modelId,
      prompt_id: (await fx.agent()).promptId,
      a2a_agents: [{ a2a_agent_id: '00000000-0000-4000-8000-000000000000' }],
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.errorDetails)).toContain('a2a_agents.0.a2a_agent_id');

    const openapi = await fx.api.request<unknown>('GET', '/api/agent-server/openapi.json');
    const paths = Object.keys((openapi.body as unknown as { paths: Record<string, unknown> }).paths);
    expect(paths).toEqual(expect.arrayContaining([A2A, `${A2A}/{id}`, `${A2A}/{id}/inspect`]));

    const missing = await fx.api.request('GET', `${A2A}/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);

    const unreachable = await register('http://127.0.0.1:9/.well-known/agent-card.json');
    const failed = await fx.api.request<unknown>('POST', `${A2A}/${unreachable.id}/inspect`);
    expect(failed.status).toBe(502);
    expect(JSON.stringify(failed.body.errorDetails)).toContain('could not read the agent card');

    // The egress policy refuses the metadata address: 403 saying why, retrying cannot help.
    const metadata = await register('http://169.254.169.254/.well-known/agent-card.json');
    const refused = await fx.api.request<unknown>('POST', `${A2A}/${metadata.id}/inspect`);
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body.errorDetails)).toContain('EGRESS_DENY');

    // Listed by an agent: not deleted (409), then deleted once the agent lets go.
    const agent = await fx.agent({ a2a_agents: [{ a2a_agent_id: created.id }] });
    expect((await fx.api.request('DELETE', `${A2A}/${created.id}`)).status).toBe(409);
    await fx.api.request('PATCH', `/api/agent-server/agents/${agent.id}`, { a2a_agents: [] });
    expect((await fx.api.request('DELETE', `${A2A}/${created.id}`)).status).toBe(200);
  }, 60_000);

  it('a card without skills is one delegate tool', async () => {
    const bare = await startA2aTestAgent({ skills: false });
    try {
      const created = await register(bare.cardUrl);
      const res = await fx.api.request<{ skills: Array<{ id: string; tool: string }> }>(
        'POST',
        `${A2A}/${created.id}/inspect`,
      );
      expect(res.body.data.skills.map((s) => s.id)).toEqual(['delegate']);
      expect(res.body.data.skills[0]!.tool).toMatch(/__delegate$/);
    } finally {
      await bare.close();
    }
  });

  /** An agent listing the remote; the model calls `skill` with `message`, then answers with what it heard. */
  async function callSkill(skill: string, message: string, cardUrl = remote.cardUrl) {
    fx.vendor.reset();
    const created = await register(cardUrl);
    const tool = `${created.name.replace(/[^a-zA-Z0-9_-]/g, '_')}__${skill}`;
    fx.vendor.respond = (body) => {
      const last = (body as ChatBody).messages?.at(-1);
      if (last?.role === 'tool') return { reply: { text: `remote said: ${String(last.content)}` } };
      return { reply: { tool_calls: [{ name: tool, arguments: { message } }] } };
    };
    const agent = await fx.agent({ a2a_agents: [{ a2a_agent_id: created.id }] });
    return { agent, tool };
  }

  it("calls a remote skill and answers with its result; the remote got the message once, with the agent's headers", async () => {
    const before = remote.messages.length;
    const { agent, tool } = await callSkill('answer', 'hello');
    const res = await fx.converse({ agent_id: agent.id, message: 'ask the remote' });
    expect(res.body.data.status, res.text).toBe('completed');
    expect(res.body.data.output?.content).toBe('remote said: answer to hello');
    const calls = await toolCalls(res.body.data.run_id);
    expect(calls).toEqual([
      expect.objectContaining({ name: tool, output: 'answer to hello', is_error: false }),
    ]);
    expect(remote.messages.length - before).toBe(1);
    expect(remote.authorizations.at(-1)).toBe(token);
  }, 60_000);

  it('a retry that never heard the task id finds the task holding its message (ListTasks) and sends nothing', async () => {
    // A run of its own (the row belongs to one); an earlier attempt of its call sent the
    // message and died before the answer named the task.
    const { agent } = await callSkill('answer', 'first');
    const lastRunId = (await fx.converse({ agent_id: agent.id, message: 'go' })).body.data.run_id;
    const callKey = '9:call_lost';
    const messageId = callMessageId(lastRunId, callKey);
    const client = await new ClientFactory().createFromUrl(remote.cardUrl, '');
    await client.sendMessage(
      SendMessageRequest.fromJSON({
        message: {
          messageId,
          role: 'ROLE_USER',
          parts: [{ text: 'lost' }],
          metadata: { skill_id: 'answer' },
        },
      }),
    );
    const db = createDb(databaseUrl());
    try {
      const created = await register();
      const before = remote.messages.length;
      const result = await runA2aTask(db, {
        conn: { cardUrl: remote.cardUrl, headers: {} },
        a2aAgentId: created.id,
        toolName: 'remote__answer',
        skillId: 'answer',
        runId: lastRunId,
        callKey,
        text: 'lost',
        retried: true,
        timeoutMs: 10_000,
        pollMs: 100,
        signal: new AbortController().signal,
        onState: () => undefined,
      });
      expect(result).toMatchObject({
        output: 'answer to lost',
        isError: false,
        state: 'TASK_STATE_COMPLETED',
      });
      expect(remote.messages.length).toBe(before);
      const row = await db('a2a_task_calls').where({ run_id: lastRunId, call_key: callKey }).first();
      expect(row).toMatchObject({ message_id: messageId, task_id: result.task_id });
    } finally {
      await db.destroy();
    }
  });

  it('filters skills, and a skill requiring approval is sent only once a person approves it', async () => {
    fx.vendor.reset();
    const created = await register();
    const prefix = created.name.replace(/[^a-zA-Z0-9_-]/g, '_');
    fx.vendor.script(
      { reply: { tool_calls: [{ name: `${prefix}__answer`, arguments: { message: 'approved' } }] } },
      { reply: { text: 'done' } },
    );
    const agent = await fx.agent({
      a2a_agents: [
        { a2a_agent_id: created.id, tool_filters: ['answer', 'nope'], tools_requiring_approval: ['answer'] },
      ],
    });
    const before = remote.messages.length;
    const res = await fx.converse({ agent_id: agent.id, message: 'go' });
    expect(res.body.data.status, res.text).toBe('awaiting_approval');
    expect(res.body.data.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('name skills it does not list: nope')]),
    );
    const offered = (fx.vendor.received[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toEqual([`${prefix}__answer`]);
    expect(remote.messages.length).toBe(before);
    const pending = (res.body.data as unknown as { pending_approvals: Array<{ id: string }> })
      .pending_approvals;
    const done = await fx.api.request<{ status: string; tool_calls: ToolCallView[] }>(
      'POST',
      `/api/agent-server/runs/${res.body.data.run_id}/approvals`,
      { approved_call_ids: [pending[0]!.id], wait: true },
    );
    expect(done.body.data.status, done.text).toBe('completed');
    expect(done.body.data.tool_calls).toEqual([expect.objectContaining({ output: 'answer to approved' })]);
    expect(remote.messages.length).toBe(before + 1);
  }, 60_000);

  it('follows a streamed task to its end', async () => {
    const { agent } = await callSkill('stream', 'you');
    const res = await fx.converse({ agent_id: agent.id, message: 'stream it' });
    expect(res.body.data.status, res.text).toBe('completed');
    expect(res.body.data.output?.content).toBe('remote said: streamed answer to you');
  }, 60_000);

  it('a remote that does not stream: the task is sent without waiting and read until it ends', async () => {
    const plain = await startA2aTestAgent({ streaming: false });
    try {
      const { agent } = await callSkill('stream', 'polling', plain.cardUrl);
      const res = await fx.converse({ agent_id: agent.id, message: 'no stream' });
      expect(res.body.data.status, res.text).toBe('completed');
      expect(res.body.data.output?.content).toBe('remote said: streamed answer to polling');
      expect(plain.messages).toHaveLength(1);
    } finally {
      await plain.close();
    }
  }, 60_000);

  /** The model asks `ask`, hears the question, answers it with the task id it was given. */
  async function askAndAnswer(cardUrl: string) {
    fx.vendor.reset();
    const created = await register(cardUrl);
    const tool = `${created.name.replace(/[^a-zA-Z0-9_-]/g, '_')}__ask`;
    fx.vendor.respond = (body) => {
      const tools = ((body as ChatBody).messages ?? []).filter((m) => m.role === 'tool');
      if (tools.length === 0)
        return { reply: { tool_calls: [{ name: tool, arguments: { message: 'weather?' } }] } };
      const said = String(tools.at(-1)!.content);
      const taskId = /"task_id": "([^"]+)"/.exec(said)?.[1];
      if (tools.length === 1 && taskId)
        return { reply: { tool_calls: [{ name: tool, arguments: { message: 'Paris', task_id: taskId } }] } };
      return { reply: { text: `remote said: ${said}` } };
    };
    const agent = await fx.agent({ a2a_agents: [{ a2a_agent_id: created.id }] });
    const res = await fx.converse({ agent_id: agent.id, message: 'what is the weather' });
    expect(res.body.data.status, res.text).toBe('completed');
    const calls = await toolCalls(res.body.data.run_id);
    expect(calls[0]!.output).toContain('Which city?');
    expect(calls[0]!.is_error).toBe(false);
    expect(res.body.data.output?.content).toBe('remote said: the weather in Paris is fine');
  }

  it('a remote asking for input: the model hears the question and answers it on the same task', async () => {
    await askAndAnswer(remote.cardUrl);
  }, 60_000);

  it('the same with a remote that does not stream: the answer is awaited, not the question read back', async () => {
    const plain = await startA2aTestAgent({ streaming: false });
    try {
      await askAndAnswer(plain.cardUrl);
    } finally {
      await plain.close();
    }
  }, 60_000);

  it('a worker killed mid-call: another worker follows the same remote task; the message is sent once', async () => {
    if (worker) await killHard(worker.child);
    worker = undefined;
    const doomed = await spawnWorker(env);
    let survivor: Worker | undefined;
    try {
      const { agent, tool } = await callSkill('hold', 'slowly');
      const before = remote.messages.length;
      const held = remote.whenHeld();
      let heldTask = '';
      const answer = fx.converse({ agent_id: agent.id, message: 'take your time' });
      heldTask = await held;
      survivor = await spawnWorker(env);
      await killHard(doomed.child);
      // Past the heartbeat timeout, the survivor's attempt follows the task; then the remote finishes.
      await new Promise((r) => setTimeout(r, 5_000));
      remote.release();
      const res = await answer;
      expect(res.body.data.status, res.text).toBe('completed');
      expect(res.body.data.output?.content).toBe('remote said: held answer to slowly');
      const calls = await toolCalls(res.body.data.run_id);
      expect(calls).toEqual([expect.objectContaining({ name: tool, is_error: false })]);
      expect(remote.messages.length - before).toBe(1);
      // The call remembered the remote task it started, which is the one that answered.
      const db = createDb(databaseUrl());
      try {
        const rows = await db('a2a_task_calls').where({ run_id: res.body.data.run_id });
        expect(rows).toEqual([
          expect.objectContaining({ task_id: heldTask, message_id: remote.messages.at(-1) }),
        ]);
      } finally {
        await db.destroy();
      }
    } finally {
      await killHard(doomed.child);
      if (survivor) await killHard(survivor.child);
    }
  }, 120_000);
});
