/**
 * Sub-agents on the real stack (API, Temporal dev server, worker, PostgreSQL;
 * only the vendor is scripted): an agent calls another agent of its project
 * as a tool and answers with what it said; the sub-agent's run is linked to
 * its caller (parent_run_id, source `sub_agent`, the caller's trace) and its
 * spend counts against the caller's budget; the depth and fan-out limits are
 * errors the model hears; cancelling the caller cancels the sub-agent's run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubAgentActivities } from '../../../activities/turns/sub-agent-activities.js';
import { loadConfig } from '../../../core/config.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { createLogger } from '../../../core/logger.js';
import { BudgetsRepository } from '../../../core/repositories/budgets.repository.js';
import { uniqueName } from '../../helpers/factories.js';
import { createModel } from '../../helpers/factories/config.js';
import { databaseUrl } from '../../helpers/services.js';
import type { Script } from '../../fixtures/vendors/scripted-server.js';
import { killHard, spawnWorker, useSessionWorld, waitFor, type RunData } from './session-harness.js';

interface RunView extends RunData {
  source: string;
  parent_run_id: string | null;
  rolled_back: boolean;
  agent_id: string;
  sub_agent_runs?: Array<{ run_id: string; agent_id: string; status: string; conversation_id: string }>;
}

type Body = {
  messages?: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
};

const systemOf = (body: Body) => body.messages?.find((m) => m.role === 'system')?.content ?? '';
/** Tool results the request carries (the model's view of its calls' answers). */
const toolResults = (body: Body) =>
  (body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('sub-agents', () => {
  // A stopped worker cancels its activities after a second, so a restart mid-call is quick.
  const world = useSessionWorld({
    SUB_AGENT_MAX_DEPTH: '1',
    SUB_AGENT_MAX_FANOUT: '2',
    SHUTDOWN_TIMEOUT_MS: '1000',
  });
  let db: Db;
  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db?.destroy();
  });

  const view = async (runId: string) =>
    (await world.fx.api.request<RunView>('GET', `/api/agent-server/runs/${runId}`)).body.data;

  /** An agent whose prompt names it, so the scripted vendor tells the agents' requests apart. */
  async function agent(role: string, subAgents: string[] = [], fields: Record<string, unknown> = {}) {
    const name = uniqueName(role);
    const created = await world.fx.agent(
      { name, sub_agents: subAgents.map((id) => ({ agent_id: id, description: 'Ask for help' })), ...fields },
      `You are the ${role}.`,
    );
    return { id: created.id, name, tool: `agent__${name}`, system: `You are the ${role}.` };
  }

  /** Answers each agent's requests by its prompt: `first` before any tool result, `then` after. */
  function respond(plans: Array<{ system: string; first: Script; then?: (results: string[]) => Script }>) {
    world.fx.vendor.respond = (body) => {
      const plan = plans.find((p) => systemOf(body as Body) === p.system);
      if (!plan) return undefined;
      const results = toolResults(body);
      return results.length && plan.then ? plan.then(results) : plan.first;
    };
  }

  it('a caller hands a task to a sub-agent and answers with what it said; the runs are linked', async () => {
    const researcher = await agent('researcher');
    const lead = await agent('lead', [researcher.id]);
    respond([
      {
        system: lead.system,
        first: {
          reply: { tool_calls: [{ name: researcher.tool, arguments: { message: 'find the answer' } }] },
        },
        then: (results) => ({ reply: { text: `The researcher says: ${results[0]}` } }),
      },
      { system: researcher.system, first: { reply: { text: 'it is 42' } } },
    ]);
    const res = await world.fx.converse({
      agent_id: lead.id,
      message: 'what is the answer?',
      conversation_id: uniqueName('conv'),
      end_user_id: 'alice@example.com',
    });
    expect(res.body.data.error).toBeNull();
    expect(res.body.data).toMatchObject({
      status: 'completed',
      output: { content: 'The researcher says: it is 42' },
    });
    expect(res.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: researcher.tool, output: 'it is 42', is_error: false }),
    ]);
    // The model saw the sub-agent as a tool, described as the agent's entry says.
    const first = world.fx.vendor.received.find((r) => systemOf(r.body as Body) === lead.system)!;
    const offered = (first.body as { tools: Array<{ function: { name: string; description: string } }> })
      .tools;
    expect(offered.map((t) => [t.function.name, t.function.description])).toEqual([
      [researcher.tool, 'Ask for help'],
    ]);
    // The sub-agent got the task alone, in a conversation of its own.
    const asked = world.fx.vendor.received.find((r) => systemOf(r.body as Body) === researcher.system)!;
    expect((asked.body as Body).messages!.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'find the answer' },
    ]);

    const parent = await view(res.body.data.run_id);
    expect(parent).toMatchObject({ source: 'rest', parent_run_id: null });
    expect(parent.sub_agent_runs).toEqual([
      expect.objectContaining({ agent_id: researcher.id, status: 'completed' }),
    ]);
    const child = await view(parent.sub_agent_runs![0]!.run_id);
    expect(child).toMatchObject({
      source: 'sub_agent',
      parent_run_id: parent.run_id,
      agent_id: researcher.id,
      trace_id: parent.trace_id,
      output: { content: 'it is 42' },
    });
    expect(child.conversation_id).not.toBe(parent.conversation_id);
    // The sub-agent's turn acts for the caller's person (their own MCP authorizations).
    const [childRow] = await db('runs').where({ id: child.run_id }).select('end_user_id');
    expect(childRow).toEqual({ end_user_id: 'alice@example.com' });

    // The call's start repeated (a retried activity, a repeated child workflow) finds the same run.
    const activities = createSubAgentActivities({
      config: loadConfig({ ...world.fx.env, PORT: '0' }),
      db,
      logger: createLogger('error'),
      temporal: world.client,
    });
    const callId = String(parent.tool_calls[0]!.id);
    const again = await activities.startSubAgentTurn({ parentRunId: parent.run_id, step: 1, callId });
    expect(again).toEqual({ kind: 'started', runId: child.run_id });
    const linked: Array<{ id: string }> = await db('runs')
      .where({ parent_run_id: parent.run_id })
      .select('id');
    expect(linked).toEqual([{ id: child.run_id }]);

    // The sub-agent's spans are in the caller's trace, nested under it.
    expect(parent.trace_id).toBeTruthy();
    const spans = await waitFor(
      async () => {
        const trace = await world.fx.api.request<{
          spans: Array<{ name: string; attributes: Record<string, unknown> }>;
        }>('GET', `/api/agent-server/traces/${parent.trace_id}`);
        const all = trace.body.data?.spans ?? [];
        return all.some((s) => s.attributes['gen_ai.agent.id'] === researcher.id && /callModel/.test(s.name))
          ? all
          : undefined;
      },
      20_000,
      "the sub-agent's spans in the caller's trace",
    );
    expect(spans.some((s) => s.attributes['gen_ai.agent.id'] === lead.id)).toBe(true);

    // What the sub-agent spent counts against the caller's agent budget too.
    const budgets = new BudgetsRepository(db);
    const use = await budgets.use({
      scope: 'agent',
      scope_id: lead.id,
      budget: { period: 'total', max_usd: 100 },
    });
    expect(use.spent_tokens).toBe(
      parent.usage.input_tokens +
        parent.usage.output_tokens +
        child.usage.input_tokens +
        child.usage.output_tokens,
    );
  });

  it('past SUB_AGENT_MAX_DEPTH the call is an error the model hears, not a failure', async () => {
    const third = await agent('third');
    const second = await agent('second', [third.id]);
    const first = await agent('first', [second.id]);
    const call = (tool: string): Script => ({
      reply: { tool_calls: [{ name: tool, arguments: { message: 'go on' } }] },
    });
    let refusal = '';
    respond([
      {
        system: first.system,
        first: call(second.tool),
        then: (r) => ({ reply: { text: `first: ${r[0]}` } }),
      },
      {
        system: second.system,
        first: call(third.tool),
        then: (r) => {
          refusal = r[0]!;
          return { reply: { text: 'second alone' } };
        },
      },
      { system: third.system, first: { reply: { text: 'never' } } },
    ]);
    const res = await world.fx.converse({
      agent_id: first.id,
      message: 'start',
      conversation_id: uniqueName('conv'),
    });
    expect(res.body.data).toMatchObject({ status: 'completed', output: { content: 'first: second alone' } });
    expect(refusal).toContain('SUB_AGENT_MAX_DEPTH');
    expect(world.fx.vendor.received.some((r) => systemOf(r.body as Body) === third.system)).toBe(false);
    const child = await view((await view(res.body.data.run_id)).sub_agent_runs![0]!.run_id);
    expect(child.sub_agent_runs).toBeUndefined();
    expect(child.tool_calls).toEqual([expect.objectContaining({ name: third.tool, is_error: true })]);
  });

  it('past SUB_AGENT_MAX_FANOUT a turn’s further calls are refused; a step’s calls run side by side', async () => {
    const helper = await agent('helper');
    const boss = await agent('boss', [helper.id]);
    const ask = (n: number) => ({ name: helper.tool, arguments: { message: `task ${n}` } });
    respond([
      {
        system: boss.system,
        first: { reply: { tool_calls: [ask(1), ask(2), ask(3)] } },
        then: () => ({ reply: { text: 'done' } }),
      },
      // Held: both calls' requests arrive before either is answered, so they run side by side.
      { system: helper.system, first: { reply: { text: 'helped' }, hold: true } },
    ]);
    const answered = world.fx.converse({
      agent_id: boss.id,
      message: 'split it',
      conversation_id: uniqueName('conv'),
    });
    const helperRequests = () =>
      world.fx.vendor.received.filter((r) => systemOf(r.body as Body) === helper.system).length;
    await waitFor(() => helperRequests() === 2 || undefined, 20_000, 'both sub-agent calls at once');
    world.fx.vendor.release();
    const res = await answered;
    expect(res.body.data.status).toBe('completed');
    expect(helperRequests()).toBe(2);
    const outputs = res.body.data.tool_calls.map((c) => String(c.output));
    expect(outputs.filter((o) => o === 'helped')).toHaveLength(2);
    expect(outputs.filter((o) => o.includes('SUB_AGENT_MAX_FANOUT'))).toHaveLength(1);
    expect((await view(res.body.data.run_id)).sub_agent_runs).toHaveLength(2);
  });

  it('cancelling the caller with rollback cancels and rolls back the sub-agent’s run under way', async () => {
    const slow = await agent('slow');
    const caller = await agent('caller', [slow.id]);
    respond([
      {
        system: caller.system,
        first: { reply: { tool_calls: [{ name: slow.tool, arguments: { message: 'take your time' } }] } },
      },
      { system: slow.system, first: { reply: { text: 'one two three four' }, hold: true } },
    ]);
    const stream = world.fx.stream({
      agent_id: caller.id,
      message: 'ask the slow one',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    const runId = await waitFor(async () => {
      const rows: Array<{ id: string }> = await db('runs').where({ agent_id: caller.id }).select('id');
      return rows[0]?.id;
    });
    const childId = await waitFor(async () => (await view(runId)).sub_agent_runs?.[0]?.run_id);

    const cancelled = await world.fx.api.request<RunView>(
      'POST',
      `/api/agent-server/runs/${runId}/cancel?project_id=${world.fx.projectId}`,
      { action: 'rollback' },
    );
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    // The sub-agent's run ended first, the same way; its model call was aborted.
    expect(await view(childId)).toMatchObject({
      status: 'cancelled',
      rolled_back: true,
      parent_run_id: runId,
    });
    // Its turn left its conversation: the task it was given too.
    expect(await db('messages').where({ run_id: childId }).select('id')).toEqual([]);
    await waitFor(() => world.fx.vendor.aborted >= 1 || undefined, 5_000, 'the vendor to see the abort');
    await stream;
  });

  it('a worker restarted while the sub-agent answers: the call still makes one run, and the caller finishes', async () => {
    const slow = await agent('patient');
    const caller = await agent('waiter', [slow.id]);
    respond([
      {
        system: caller.system,
        first: { reply: { tool_calls: [{ name: slow.tool, arguments: { message: 'answer slowly' } }] } },
        then: (r) => ({ reply: { text: `got: ${r[0]}` } }),
      },
      { system: slow.system, first: { reply: { text: 'slow answer' }, hold: true } },
    ]);
    const stream = world.fx.stream({
      agent_id: caller.id,
      message: 'go',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    await world.stopWorker();
    world.fx.vendor.release();
    await world.restartWorker();
    const events = await stream;
    expect(events.at(-1)).toMatchObject({ event: 'run.completed' });
    const runId = String(events[0]!.data.run_id);
    const parent = await view(runId);
    expect(parent).toMatchObject({ status: 'completed', output: { content: 'got: slow answer' } });
    // The sub-agent's model call was cut by the restart and made again on the new worker.
    expect(world.fx.vendor.received.filter((r) => systemOf(r.body as Body) === slow.system)).toHaveLength(2);
    const children = await db('runs').where({ parent_run_id: runId }).select('id', 'status');
    expect(children).toEqual([{ id: parent.sub_agent_runs![0]!.run_id, status: 'completed' }]);
    // One user message in the sub-agent's conversation: its turn was not started twice.
    const messages = await db('messages')
      .where({ run_id: children[0]!.id, role: 'user' })
      .count<{ count: string }[]>('* as count');
    expect(Number(messages[0]!.count)).toBe(1);
  }, 60_000);

  it('a sub-agent’s model call waits for its caller’s agent budget, and goes on when it is raised', async () => {
    // Priced (1,000 USD per million tokens: a call reserves about 1 USD), under a model id of its own.
    const priced = await createModel(world.fx.api, world.fx.projectId, {
      provider_id: world.fx.providerId,
      model_id: uniqueName('gpt-priced'),
      pricing: { input_per_million_usd: 1_000, output_per_million_usd: 1_000 },
      max_output_tokens: 1_000,
    });
    const helper = await agent('frugal', [], { model_id: priced.id });
    const caller = await agent('spender', [helper.id], {
      model_id: priced.id,
      budget: { max_usd: 100, period: 'day' },
    });
    respond([
      {
        system: caller.system,
        // Text first, so the answer can be held while the budget is lowered.
        first: {
          reply: {
            text: 'asking',
            tool_calls: [{ name: helper.tool, arguments: { message: 'cheap please' } }],
          },
          hold: true,
        },
        then: (r) => ({ reply: { text: `paid: ${r[0]}` } }),
      },
      { system: helper.system, first: { reply: { text: 'helped on budget' } } },
    ]);
    const stream = world.fx.stream({
      agent_id: caller.id,
      message: 'go',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    const lowered = await world.fx.api.request('PATCH', `/api/agent-server/agents/${caller.id}`, {
      budget: { max_usd: 0.01, period: 'day' },
    });
    expect(lowered.status).toBe(200);
    world.fx.vendor.release();

    const childId = await waitFor(
      async () => {
        const rows: Array<{ id: string; status: string }> = await db('runs')
          .where({ agent_id: helper.id })
          .select('id', 'status');
        return rows[0]?.status === 'awaiting_budget' ? rows[0].id : undefined;
      },
      20_000,
      "the sub-agent's run to wait for budget",
    );
    const waiting = await view(childId);
    expect(
      (waiting as unknown as { pause: { details: Record<string, unknown> } }).pause.details,
    ).toMatchObject({
      scope: 'agent',
      id: caller.id,
      max_usd: 0.01,
    });
    expect(world.fx.vendor.received.some((r) => systemOf(r.body as Body) === helper.system)).toBe(false);

    const raised = await world.fx.api.request('PATCH', `/api/agent-server/agents/${caller.id}`, {
      budget: { max_usd: 100, period: 'day' },
    });
    expect(raised.status).toBe(200);
    const events = await stream;
    expect(events.at(-1)).toMatchObject({ event: 'run.completed' });
    expect((await view(childId)).status).toBe('completed');
    expect((await view(String(events[0]!.data.run_id))).output?.content).toBe('paid: helped on budget');
  }, 60_000);

  it('a worker killed while the sub-agent answers: another takes the call over, still one run', async () => {
    const slow = await agent('steady');
    const caller = await agent('asker', [slow.id]);
    respond([
      {
        system: caller.system,
        first: { reply: { tool_calls: [{ name: slow.tool, arguments: { message: 'keep going' } }] } },
        then: (r) => ({ reply: { text: `survived: ${r[0]}` } }),
      },
      { system: slow.system, first: { reply: { text: 'still here' }, hold: true } },
    ]);
    // Only a worker of its own process runs the call when it is killed.
    await world.stopWorker();
    const doomed = await spawnWorker(world.fx.env);
    try {
      const stream = world.fx.stream({
        agent_id: caller.id,
        message: 'go',
        conversation_id: uniqueName('conv'),
      });
      await world.fx.vendor.whenHeld();
      await killHard(doomed.child);
      world.fx.vendor.release();
      await world.restartWorker();
      const events = await stream;
      expect(events.at(-1)).toMatchObject({ event: 'run.completed' });
      const runId = String(events[0]!.data.run_id);
      expect((await view(runId)).output?.content).toBe('survived: still here');
      const children: Array<{ id: string; status: string }> = await db('runs')
        .where({ parent_run_id: runId })
        .select('id', 'status');
      expect(children).toHaveLength(1);
      expect(children[0]!.status).toBe('completed');
    } finally {
      await killHard(doomed.child);
      await world.restartWorker();
    }
  }, 120_000);
});
