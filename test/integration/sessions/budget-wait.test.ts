/**
 * Budgets that pause, not fail: a turn whose model call does not fit in the
 * agent's, the conversation's or the project key's budget waits
 * (`awaiting_budget`), and goes on when the budget is raised, when a person
 * resumes it once it fits, or ends cancelled (a person, or the agent's
 * budget_wait_timeout_ms). Real Temporal, real Postgres, the scripted vendor.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { createModel, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { uniqueName } from '../../helpers/factories.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { CONVERSE, useSessionWorld, waitFor } from './session-harness.js';

interface Run {
  run_id: string;
  conversation_id: string;
  status: string;
  error: { code: string } | null;
  output: { content: string } | null;
  pause: {
    reason: string;
    since: string;
    timeout_at: string | null;
    details: Record<string, unknown>;
  } | null;
}

/** 1,000 USD per million tokens: a call reserving ~1,000 tokens needs about 1 USD. */
const PRICING = { input_per_million_usd: 1_000, output_per_million_usd: 1_000 };

describe.skipIf(noTemporal())('budgets that pause a run instead of failing it', () => {
  const world = useSessionWorld();
  const api = () => world.fx.api;
  let db: Db;
  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db?.destroy();
  });

  /** A project (with a key when `key` is given), a priced model, and an agent with `agent` fields. */
  async function setup(agent: Record<string, unknown> = {}, key?: Record<string, unknown>) {
    const vk = key
      ? await createVirtualKey(api(), {
          providers: [{ provider_id: world.fx.providerId, model_names: ['*'] }],
          ...key,
        })
      : undefined;
    const project = await api().request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: uniqueName('budgets'),
      ...(vk ? { virtual_key_id: vk.id } : {}),
    });
    const projectId = project.body.data.id;
    // A model id of its own: metering caches a model's price for 30 s.
    const model = await createModel(api(), projectId, {
      provider_id: world.fx.providerId,
      model_id: uniqueName('gpt-budget'),
      pricing: PRICING,
      max_output_tokens: 1_000,
    });
    const prompt = await createPrompt(api(), projectId, { template: 'Be brief.' });
    const created = await api().request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${projectId}`,
      {
        name: uniqueName('agent'),
        model_id: model.id,
        prompt_id: prompt.id,
        ...agent,
      },
    );
    expect(created.status).toBe(200);
    return { projectId, agentId: created.body.data.id, keyId: vk?.id, modelId: model.id };
  }

  const converse = async (projectId: string, body: Record<string, unknown>) =>
    (await api().request<Run>('POST', `${CONVERSE}?project_id=${projectId}`, body)).body.data;
  const run = async (id: string) =>
    (await api().request<Run>('GET', `/api/agent-server/runs/${id}`)).body.data;
  const until = (id: string, status: string) =>
    waitFor(async () => ((await run(id)).status === status ? run(id) : undefined), 20_000, `run ${status}`);
  const eventTypes = (id: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> =>
    db('run_events').where({ run_id: id }).orderBy('seq').select('type', 'data');

  it("waits for the agent's budget, and goes on when the agent's budget is raised", async () => {
    const { projectId, agentId } = await setup({ budget: { max_usd: 0.01, period: 'day' } });
    world.fx.vendor.script({ reply: { text: 'paid for' } });
    const waiting = await converse(projectId, { agent_id: agentId, message: 'hi' });
    expect(waiting.status).toBe('awaiting_budget');
    expect(waiting.pause).toMatchObject({
      reason: 'budget',
      timeout_at: null,
      details: { scope: 'agent', id: agentId, period: 'day', max_usd: 0.01, spent_usd: 0 },
    });
    expect(waiting.pause!.details.needed_usd as number).toBeGreaterThan(0.01);
    expect(waiting.pause!.details).not.toHaveProperty('scope_id');
    // Nothing went to the vendor.
    expect(world.fx.vendor.received).toHaveLength(0);

    // A resume that still does not fit is refused, and the run keeps waiting.
    const early = await api().request('POST', `/api/agent-server/runs/${waiting.run_id}/budget`, {
      action: 'resume',
    });
    expect(early.status).toBe(409);
    expect((await run(waiting.run_id)).status).toBe('awaiting_budget');

    const raised = await api().request('PATCH', `/api/agent-server/agents/${agentId}`, {
      budget: { max_usd: 100, period: 'day' },
    });
    expect(raised.status).toBe(200);
    const done = await until(waiting.run_id, 'completed');
    expect(done.output?.content).toBe('paid for');
    expect(done.pause).toBeNull();
    const events = await eventTypes(waiting.run_id);
    const paused = events.find((e) => e.type === 'run.paused');
    const resumed = events.find((e) => e.type === 'run.resumed');
    expect(paused?.data).toMatchObject({ status: 'awaiting_budget', reason: 'budget' });
    expect(resumed?.data).toMatchObject({ reason: 'budget', by: 'budget_raised' });
  });

  it("waits for the conversation's budget; a person resumes it once it fits", async () => {
    const { projectId, agentId } = await setup();
    const conversation = await api().request<{ id: string }>(
      'POST',
      `/api/agent-server/conversations?project_id=${projectId}`,
      { budget: { max_usd: 0.01, max_tokens: 100_000, period: 'total' } },
    );
    expect(conversation.body.data).toMatchObject({ budget: { max_usd: 0.01, period: 'total' } });
    const conversationId = conversation.body.data.id;
    world.fx.vendor.script({ reply: { text: 'resumed by hand' } });
    const waiting = await converse(projectId, {
      agent_id: agentId,
      conversation_id: conversationId,
      message: 'hi',
    });
    expect(waiting.status).toBe('awaiting_budget');
    // A total budget has no next period.
    expect(waiting.pause!.details).toMatchObject({
      scope: 'conversation',
      id: conversationId,
      resets_at: null,
    });

    // Raised by a direct write no one announces: only a person's resume wakes it.
    await db('conversations')
      .where({ project_id: projectId, id: conversationId })
      .update({ budget: JSON.stringify({ max_usd: 100, period: 'total' }) });
    const resumed = await api().request<Run>('POST', `/api/agent-server/runs/${waiting.run_id}/budget`, {
      action: 'resume',
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.status).not.toBe('awaiting_budget');
    expect((await until(waiting.run_id, 'completed')).output?.content).toBe('resumed by hand');
    const events = await eventTypes(waiting.run_id);
    expect(events.find((e) => e.type === 'run.resumed')?.data).toMatchObject({ by: 'user' });
  });

  it("waits for the project key's budget and goes on when the key's budget is raised", async () => {
    const { projectId, agentId, keyId } = await setup({}, { budget: { max_usd: 0.01, period: 'month' } });
    world.fx.vendor.script({ reply: { text: 'key raised' } });
    const waiting = await converse(projectId, { agent_id: agentId, message: 'hi' });
    expect(waiting.status).toBe('awaiting_budget');
    expect(waiting.pause!.details).toMatchObject({ scope: 'key', id: keyId, period: 'month' });
    expect(Date.parse(waiting.pause!.details.resets_at as string)).toBeGreaterThan(Date.now());
    await api().request('PATCH', `/api/agent-server/virtual-keys/${keyId}`, {
      budget: { max_usd: 100, period: 'month' },
    });
    expect((await until(waiting.run_id, 'completed')).output?.content).toBe('key raised');
  });

  it('a person cancels a waiting run; decisions on a run that does not wait answer 409', async () => {
    const { projectId, agentId } = await setup({ budget: { max_usd: 0.01, period: 'week' } });
    const waiting = await converse(projectId, { agent_id: agentId, message: 'hi' });
    expect(waiting.status).toBe('awaiting_budget');
    const cancelled = await api().request<Run>('POST', `/api/agent-server/runs/${waiting.run_id}/budget`, {
      action: 'cancel',
    });
    expect(cancelled.body.data.status).toBe('cancelled');
    const again = await api().request<{ error: { code: string } }>(
      'POST',
      `/api/agent-server/runs/${waiting.run_id}/budget`,
      { action: 'resume' },
    );
    expect(again.status).toBe(409);
    const bad = await api().request<{ error: { details: Array<{ field: string }> } }>(
      'POST',
      `/api/agent-server/runs/${waiting.run_id}/budget`,
      { action: 'later' },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('action');
  });

  it("the agent's budget_wait_timeout_ms cancels a run left waiting", async () => {
    const { projectId, agentId } = await setup({
      budget: { max_usd: 0.01, period: 'day' },
      budget_wait_timeout_ms: 1_000,
    });
    const waiting = await converse(projectId, { agent_id: agentId, message: 'hi' });
    expect(waiting.status).toBe('awaiting_budget');
    expect(waiting.pause!.timeout_at).not.toBeNull();
    const ended = await until(waiting.run_id, 'cancelled');
    expect(ended.error).toMatchObject({ code: 'budget_wait_timeout' });
    expect(world.fx.vendor.received).toHaveLength(0);
  });

  it('refuses a budget on an agent whose model has no price, naming the field', async () => {
    const { projectId } = await setup();
    const unpriced = await createModel(api(), projectId, {
      provider_id: world.fx.providerId,
      model_id: uniqueName('no-such-listed-model'),
    });
    const prompt = await createPrompt(api(), projectId, { template: 'x' });
    const res = await api().request('POST', `/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: unpriced.id,
      prompt_id: prompt.id,
      budget: { max_usd: 1, period: 'day' },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('"budget"');
    const negative = await api().request('POST', `/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: unpriced.id,
      prompt_id: prompt.id,
      budget: { max_usd: -1, period: 'fortnight' },
    });
    expect(negative.status).toBe(400);
    expect(JSON.stringify(negative.body)).toContain('budget.max_usd');
  });

  it("announces budget.threshold and run.paused to webhooks, waits across a worker restart, and a PATCH of the conversation's budget wakes it", async () => {
    const received: Array<{ type: string; data: Record<string, unknown> }> = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString()) as (typeof received)[number]);
        res.writeHead(204).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await new Promise((r) => receiver.once('listening', r));
    try {
      const { projectId, agentId } = await setup();
      const hook = await api().request('POST', `/api/agent-server/webhooks?project_id=${projectId}`, {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        events: ['budget.threshold', 'run.paused'],
      });
      expect(hook.status).toBe(200);
      const conversation = await api().request<{ id: string }>(
        'POST',
        `/api/agent-server/conversations?project_id=${projectId}`,
        { budget: { max_usd: 0.01, period: 'day', alert_at: 0.5 } },
      );
      const conversationId = conversation.body.data.id;
      world.fx.vendor.script({ reply: { text: 'after the restart' } });
      const waiting = await converse(projectId, {
        agent_id: agentId,
        conversation_id: conversationId,
        message: 'hi',
      });
      expect(waiting.status).toBe('awaiting_budget');
      const events = await waitFor(
        () => (received.length >= 2 ? received : undefined),
        20_000,
        'the webhook deliveries',
      );
      const threshold = events.find((e) => e.type === 'budget.threshold');
      expect(threshold?.data).toMatchObject({
        scope: 'conversation',
        id: conversationId,
        max_usd: 0.01,
        alert_at: 0.5,
        project_id: projectId,
        run_id: waiting.run_id,
      });
      expect(events.find((e) => e.type === 'run.paused')?.data).toMatchObject({
        run_id: waiting.run_id,
        status: 'awaiting_budget',
        pause: { reason: 'budget' },
      });

      // The wait is the workflow's: no worker holds it.
      await world.stopWorker();
      await world.restartWorker();
      const patched = await api().request(
        'PATCH',
        `/api/agent-server/conversations/${conversationId}?project_id=${projectId}`,
        {
          budget: { max_usd: 100, period: 'day' },
        },
      );
      expect(patched.status).toBe(200);
      expect((await until(waiting.run_id, 'completed')).output?.content).toBe('after the restart');
      // Crossed once per period: the next turn announces nothing more.
      world.fx.vendor.script({ reply: { text: 'again' } });
      expect(
        (await converse(projectId, { agent_id: agentId, conversation_id: conversationId, message: 'more' }))
          .status,
      ).toBe('completed');
      expect(received.filter((e) => e.type === 'budget.threshold')).toHaveLength(1);
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  it("a summary's model call waits for budget too, then the turn's", async () => {
    const { projectId } = await setup();
    const agentRow = await db('agents').where({ project_id: projectId }).first('model_id', 'prompt_id');
    const summarizerPrompt = await createPrompt(api(), projectId, { template: 'Summarize.' });
    const agent = await api().request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${projectId}`,
      {
        name: uniqueName('summarizing'),
        model_id: agentRow!.model_id,
        prompt_id: agentRow!.prompt_id,
        summarizer_type: 'llm',
        llm_summarizer_token_threshold: 50,
        llm_summarizer_keep_recent_count: 1,
        llm_summarizer_prompt_id: summarizerPrompt.id,
      },
    );
    const agentId = agent.body.data.id;
    const conversationId = uniqueName('summarized');
    world.fx.vendor.script(
      { reply: { text: 'r1', usage: { input: 10, output: 1 } } },
      { reply: { text: 'r2', usage: { input: 60, output: 1 } } },
      { reply: { text: 'S: the user said m1 and m2', usage: { input: 30, output: 8 } } },
      { reply: { text: 'r3', usage: { input: 20, output: 1 } } },
    );
    for (const message of ['m1', 'm2'])
      expect(
        (await converse(projectId, { agent_id: agentId, conversation_id: conversationId, message })).status,
      ).toBe('completed');
    // Nothing more may be spent: turn 3's summary (it comes first) cannot be sent.
    await api().request(
      'PATCH',
      `/api/agent-server/conversations/${conversationId}?project_id=${projectId}`,
      {
        budget: { max_usd: 0, period: 'day' },
      },
    );
    const waiting = await converse(projectId, {
      agent_id: agentId,
      conversation_id: conversationId,
      message: 'm3',
    });
    expect(waiting.status).toBe('awaiting_budget');
    expect(world.fx.vendor.received).toHaveLength(2);
    await api().request(
      'PATCH',
      `/api/agent-server/conversations/${conversationId}?project_id=${projectId}`,
      {
        budget: { max_usd: 100, period: 'day' },
      },
    );
    expect((await until(waiting.run_id, 'completed')).output?.content).toBe('r3');
    expect(world.fx.vendor.received).toHaveLength(4);
    const summaries = await db('thread_summaries').where({ run_id: waiting.run_id });
    expect(summaries).toHaveLength(1);
  });
});
