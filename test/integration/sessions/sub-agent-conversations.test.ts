/**
 * The conversations sub-agent calls run in, on the real stack (API, Temporal
 * dev server, worker, PostgreSQL, the process sandbox backend; only the
 * vendor is scripted):
 * - deleting a conversation deletes the sub-agent conversations its runs
 *   created, at every depth: their rows, sessions and workspaces; a call
 *   repeated after the delete stores nothing;
 * - a sub-agent still answering when its caller's conversation is deleted is
 *   stopped, and nothing of it comes back;
 * - a deletion that did not know of a sub-agent conversation (stored after
 *   the sessions were listed) ends its sessions first, then deletes it too;
 * - a sub-agent conversation is listed (namespace `sub-agents`) and can be
 *   deleted on its own, which leaves its caller's conversation as it was;
 * - rolling back a caller undoes the turns its sub-agents already finished,
 *   at every depth (and, in sub-agents.test.ts, cancels the ones under way
 *   the same way); interrupting it keeps them.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
import { createSubAgentActivities } from '../../../activities/turns/sub-agent-activities.js';
import { loadConfig } from '../../../core/config.js';
import { createLogger } from '../../../core/logger.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { ConversationsRepository } from '../../../core/repositories/conversations.repository.js';
import {
  awaitDeletionUpdate,
  DELETE_CONVERSATION_WORKFLOW_TYPE,
  deleteConversationWorkflowId,
  type DeleteConversationInput,
} from '../../../workflows/conversation-delete.definitions.js';
import { sessionWorkflowId } from '../../../workflows/session.definitions.js';
import { uniqueName } from '../../helpers/factories.js';
import { CONVERSATIONS as C } from '../../helpers/factories/content.js';
import type { Script } from '../../fixtures/vendors/scripted-server.js';
import { useProcessSandboxWorld, waitFor, type RunData } from './session-harness.js';

interface RunView extends RunData {
  parent_run_id: string | null;
  rolled_back: boolean;
  sub_agent_runs?: Array<{ run_id: string; agent_id: string; status: string; conversation_id: string }>;
}

type Body = { messages?: Array<{ role: string; content: string | null }> };

const systemOf = (body: Body) => body.messages?.find((m) => m.role === 'system')?.content ?? '';
const toolResults = (body: Body) =>
  (body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('sub-agent conversations', () => {
  const world = useProcessSandboxWorld('sub-agent-conversations');
  const db = () => world.fx.api.server.deps.db;
  const project = () => `project_id=${world.fx.projectId}`;

  const view = async (runId: string) =>
    (await world.fx.api.request<RunView>('GET', `/api/agent-server/runs/${runId}?${project()}`)).body.data;
  const conversation = (id: string) =>
    world.fx.api.request('GET', `${C}/${encodeURIComponent(id)}?${project()}`);
  const del = (id: string) => world.fx.api.request('DELETE', `${C}/${encodeURIComponent(id)}?${project()}`);
  const messagesOf = async (runId: string) =>
    Number((await db()('messages').where({ run_id: runId }).count<{ n: string }>('* as n').first())?.n);

  async function agent(role: string, subAgents: string[] = [], fields: Record<string, unknown> = {}) {
    const name = uniqueName(role);
    const created = await world.fx.agent(
      { name, sub_agents: subAgents.map((id) => ({ agent_id: id })), ...fields },
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

  const ask = (tool: string, message: string): Script => ({
    reply: { tool_calls: [{ name: tool, arguments: { message } }] },
  });

  async function sessionGone(workflowId: string): Promise<void> {
    await waitFor(
      () =>
        world.client.workflow
          .getHandle(workflowId)
          .describe()
          .then(
            () => undefined,
            (err: unknown) => (err instanceof WorkflowNotFoundError ? true : undefined),
          ),
      15_000,
      `${workflowId} to be deleted`,
    );
  }

  it('deleting a conversation deletes the sub-agent conversations below it, at every depth', async () => {
    const leaf = await agent('leaf', [], { sandbox: { enabled: true } });
    const mid = await agent('mid', [leaf.id]);
    const lead = await agent('lead', [mid.id]);
    respond([
      {
        system: lead.system,
        first: ask(mid.tool, 'go'),
        then: (r) => ({ reply: { text: `lead: ${r[0]}` } }),
      },
      {
        system: mid.system,
        first: ask(leaf.tool, 'write'),
        then: (r) => ({ reply: { text: `mid: ${r[0]}` } }),
      },
      {
        system: leaf.system,
        first: {
          reply: {
            tool_calls: [
              { name: 'execute_bash_commands', arguments: { code: 'echo the secret > notes.txt' } },
            ],
          },
        },
        then: () => ({ reply: { text: 'written' } }),
      },
    ]);
    const leadConversation = uniqueName('conv');
    const turn = (
      await world.fx.converse({ agent_id: lead.id, conversation_id: leadConversation, message: 'start' })
    ).body.data;
    expect(turn).toMatchObject({ status: 'completed', output: { content: 'lead: mid: written' } });
    const midRun = (await view(turn.run_id)).sub_agent_runs![0]!;
    const leafRun = (await view(midRun.run_id)).sub_agent_runs![0]!;
    const workspace = path.join(
      world.dataDir,
      'sandboxes',
      sandboxName({
        projectId: world.fx.projectId,
        agentId: leaf.id,
        conversationId: leafRun.conversation_id,
      }),
      'workspace',
    );
    expect(await readFile(path.join(workspace, 'notes.txt'), 'utf8')).toBe('the secret\n');
    // Listed like any other conversation, in their own namespace.
    const listed = await world.fx.api.request<Array<{ id: string }>>(
      'GET',
      `${C}?${project()}&namespace=sub-agents&limit=100`,
    );
    expect(listed.body.data.map((c) => c.id)).toEqual(
      expect.arrayContaining([midRun.conversation_id, leafRun.conversation_id]),
    );

    expect((await del(leadConversation)).status).toBe(200);
    for (const id of [leadConversation, midRun.conversation_id, leafRun.conversation_id])
      expect((await conversation(id)).status).toBe(404);
    expect(await db()('runs').whereIn('id', [turn.run_id, midRun.run_id, leafRun.run_id])).toEqual([]);
    expect(await messagesOf(leafRun.run_id)).toBe(0);
    expect(existsSync(path.dirname(workspace))).toBe(false);
    await sessionGone(sessionWorkflowId(mid.id, midRun.conversation_id));
    await sessionGone(sessionWorkflowId(leaf.id, leafRun.conversation_id));

    // The caller's call repeated after the delete (a retried step) stores nothing.
    const activities = createSubAgentActivities({
      config: loadConfig({ ...world.fx.env, PORT: '0' }),
      db: db(),
      logger: createLogger('error'),
      temporal: world.client,
    });
    const callId = String(turn.tool_calls[0]!.id);
    expect(await activities.startSubAgentTurn({ parentRunId: turn.run_id, step: 1, callId })).toEqual({
      kind: 'refused',
      message: 'not run: the calling run no longer exists',
    });
    expect((await conversation(midRun.conversation_id)).status).toBe(404);
  });

  it('a sub-agent still answering when its caller’s conversation is deleted is stopped, and nothing comes back', async () => {
    const slow = await agent('slow');
    const caller = await agent('caller', [slow.id]);
    respond([
      { system: caller.system, first: ask(slow.tool, 'take your time') },
      { system: slow.system, first: { reply: { text: 'one two three four' }, hold: true } },
    ]);
    const callerConversation = uniqueName('conv');
    const stream = world.fx.stream({
      agent_id: caller.id,
      message: 'ask',
      conversation_id: callerConversation,
    });
    await world.fx.vendor.whenHeld();
    const runId = await waitFor(async () => {
      const rows: Array<{ id: string }> = await db()('runs').where({ agent_id: caller.id }).select('id');
      return rows[0]?.id;
    });
    const child = await waitFor(async () => (await view(runId)).sub_agent_runs?.[0]);
    expect(child.status).toBe('running');

    expect((await del(callerConversation)).status).toBe(200);
    const events = await stream;
    expect(events.at(-1)?.event).toBe('run.cancelled');
    expect((await conversation(child.conversation_id)).status).toBe(404);
    await sessionGone(sessionWorkflowId(slow.id, child.conversation_id));
    // The held model call ends now: nothing of it is written back.
    world.fx.vendor.release();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await db()('conversations').where({ id: child.conversation_id })).toEqual([]);
    expect(await db()('runs').where({ id: child.run_id })).toEqual([]);
  });

  it('a deletion that did not know of a sub-agent conversation ends its session before deleting anything', async () => {
    const helper = await agent('helper');
    const caller = await agent('caller', [helper.id]);
    respond([
      {
        system: caller.system,
        first: ask(helper.tool, 'help'),
        then: (r) => ({ reply: { text: `got ${r[0]}` } }),
      },
      { system: helper.system, first: { reply: { text: 'helped' } } },
    ]);
    const callerConversation = uniqueName('conv');
    const turn = (
      await world.fx.converse({ agent_id: caller.id, conversation_id: callerConversation, message: 'go' })
    ).body.data;
    const child = (await view(turn.run_id)).sub_agent_runs![0]!;
    const conv = (await db()('conversations')
      .where({ project_id: world.fx.projectId, id: callerConversation })
      .first())!;
    // As if the sub-agent's conversation was stored after the sessions were listed: only the caller's are given.
    const input: DeleteConversationInput = {
      projectId: world.fx.projectId,
      conversationPk: conv.pk,
      conversationId: callerConversation,
      sessions: await new ConversationsRepository(db()).sessionsOf(conv),
      lateSpanSweepsMs: [200],
    };
    const workflowId = deleteConversationWorkflowId(conv.pk);
    const result = await world.client.workflow.executeUpdateWithStart(awaitDeletionUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation(DELETE_CONVERSATION_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: world.fx.env.TEMPORAL_TASK_QUEUE!,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    expect(result).toEqual({ deleted: true });
    expect((await conversation(child.conversation_id)).status).toBe(404);
    await sessionGone(sessionWorkflowId(helper.id, child.conversation_id));
    // The first attempt found the unknown session and deleted nothing; the second deleted both.
    const handle = world.client.workflow.getHandle(workflowId);
    await handle.result();
    const scheduled = (await handle.fetchHistory()).events!.flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled.filter((name) => name === 'deleteConversationData')).toHaveLength(2);
    expect(scheduled.filter((name) => name === 'endSessions')).toHaveLength(2);
  });

  it('a sub-agent conversation deleted on its own leaves its caller’s conversation as it was', async () => {
    const helper = await agent('helper');
    const caller = await agent('caller', [helper.id]);
    respond([
      {
        system: caller.system,
        first: ask(helper.tool, 'help'),
        then: (r) => ({ reply: { text: `got ${r[0]}` } }),
      },
      { system: helper.system, first: { reply: { text: 'helped' } } },
    ]);
    const callerConversation = uniqueName('conv');
    const turn = (
      await world.fx.converse({ agent_id: caller.id, conversation_id: callerConversation, message: 'go' })
    ).body.data;
    expect(turn.status).toBe('completed');
    const child = (await view(turn.run_id)).sub_agent_runs![0]!;
    // The sub-agent's turn ran in its caller's trace.
    const spansOf = (conversationId: string) =>
      db()('spans')
        .where({ trace_id: turn.trace_id!, conversation_id: conversationId })
        .count<{ n: string }>('* as n')
        .first()
        .then((r) => Number(r?.n));
    await waitFor(
      async () => {
        await currentTelemetry()?.flush();
        return (await spansOf(child.conversation_id)) > 0 && (await spansOf(callerConversation)) > 0
          ? true
          : undefined;
      },
      20_000,
      'the spans of both turns',
    );

    expect((await del(child.conversation_id)).status).toBe(200);
    expect((await conversation(child.conversation_id)).status).toBe(404);
    expect((await conversation(callerConversation)).status).toBe(200);
    const parent = await view(turn.run_id);
    expect(parent).toMatchObject({ status: 'completed', output: { content: 'got helped' } });
    expect(parent.sub_agent_runs ?? []).toEqual([]);
    expect(await messagesOf(turn.run_id)).toBeGreaterThan(0);
    // The shared trace lost the sub-agent's spans only.
    expect(await spansOf(child.conversation_id)).toBe(0);
    expect(await spansOf(callerConversation)).toBeGreaterThan(0);
  });

  it('rolling back a caller undoes the turn its sub-agent already finished', async () => {
    const helper = await agent('helper');
    const caller = await agent('caller', [helper.id]);
    respond([
      {
        system: caller.system,
        first: ask(helper.tool, 'help'),
        then: () => ({ reply: { text: 'thinking it over' }, hold: true }),
      },
      { system: helper.system, first: { reply: { text: 'helped' } } },
    ]);
    const stream = world.fx.stream({
      agent_id: caller.id,
      message: 'go',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    const runId = await waitFor(async () => {
      const rows: Array<{ id: string }> = await db()('runs').where({ agent_id: caller.id }).select('id');
      return rows[0]?.id;
    });
    const child = (await view(runId)).sub_agent_runs![0]!;
    expect(child.status).toBe('completed');
    expect(await messagesOf(child.run_id)).toBe(2);

    const cancelled = await world.fx.api.request<RunView>(
      'POST',
      `/api/agent-server/runs/${runId}/cancel?${project()}`,
      { action: 'rollback' },
    );
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    await stream;
    // Its status and answer stay on record; its conversation no longer holds the turn.
    expect(await view(child.run_id)).toMatchObject({
      status: 'completed',
      rolled_back: true,
      output: { content: 'helped' },
    });
    expect(await messagesOf(child.run_id)).toBe(0);
    expect((await conversation(child.conversation_id)).status).toBe(200);

    // Interrupting keeps a finished sub-agent turn.
    world.fx.vendor.reset();
    respond([
      {
        system: caller.system,
        first: ask(helper.tool, 'help again'),
        then: () => ({ reply: { text: 'thinking again' }, hold: true }),
      },
      { system: helper.system, first: { reply: { text: 'helped again' } } },
    ]);
    const second = world.fx.stream({
      agent_id: caller.id,
      message: 'again',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    const secondRun = await waitFor(async () => {
      const rows: Array<{ id: string }> = await db()('runs')
        .where({ agent_id: caller.id })
        .whereNot({ id: runId })
        .select('id');
      return rows[0]?.id;
    });
    const secondChild = (await view(secondRun)).sub_agent_runs![0]!;
    await world.fx.api.request('POST', `/api/agent-server/runs/${secondRun}/cancel?${project()}`, {
      action: 'interrupt',
    });
    await second;
    expect(await view(secondChild.run_id)).toMatchObject({ status: 'completed', rolled_back: false });
    expect(await messagesOf(secondChild.run_id)).toBe(2);
  });
  it('rolling back a caller undoes the finished turns of its sub-agents’ own sub-agents too', async () => {
    const leaf = await agent('leaf');
    const mid = await agent('mid', [leaf.id]);
    const lead = await agent('lead', [mid.id]);
    respond([
      {
        system: lead.system,
        first: ask(mid.tool, 'go'),
        then: () => ({ reply: { text: 'weighing it' }, hold: true }),
      },
      {
        system: mid.system,
        first: ask(leaf.tool, 'dig'),
        then: (r) => ({ reply: { text: `mid: ${r[0]}` } }),
      },
      { system: leaf.system, first: { reply: { text: 'found it' } } },
    ]);
    const stream = world.fx.stream({
      agent_id: lead.id,
      message: 'start',
      conversation_id: uniqueName('conv'),
    });
    await world.fx.vendor.whenHeld();
    const runId = await waitFor(async () => {
      const rows: Array<{ id: string }> = await db()('runs').where({ agent_id: lead.id }).select('id');
      return rows[0]?.id;
    });
    const midRun = (await view(runId)).sub_agent_runs![0]!;
    const leafRun = (await view(midRun.run_id)).sub_agent_runs![0]!;
    expect([midRun.status, leafRun.status]).toEqual(['completed', 'completed']);

    const cancelled = await world.fx.api.request<RunView>(
      'POST',
      `/api/agent-server/runs/${runId}/cancel?${project()}`,
      { action: 'rollback' },
    );
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    await stream;
    for (const run of [midRun, leafRun]) {
      expect(await view(run.run_id)).toMatchObject({ status: 'completed', rolled_back: true });
      expect(await messagesOf(run.run_id)).toBe(0);
    }
  });
});
