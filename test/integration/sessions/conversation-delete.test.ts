/**
 * DELETE /conversations/{id} deletes what was recorded of the conversation
 * (docs/security.md#conversations), with real Postgres, Temporal (a real
 * Worker) and the process sandbox backend:
 * - its threads, messages, runs, run events and summaries, its session
 *   workflows (terminated, histories deleted), its sandbox workspace and the
 *   traces of its turns; another conversation of the same agent keeps its own;
 * - a conversation recreated under the same id starts with an empty workspace;
 * - a delete in the middle of a turn stops the turn: an open stream ends with
 *   `run.cancelled`, nothing is written back, no workspace comes back;
 * - spans exported after the delete are swept; a recreated conversation's are not;
 * - with no worker to do it, the DELETE answers 503 and the deletion it
 *   accepted finishes once a worker is back.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
import { createLogger } from '../../../core/logger.js';
import { ConversationsRepository } from '../../../core/repositories/conversations.repository.js';
import { ConversationsService } from '../../../api/services/conversations.service.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import {
  awaitDeletionUpdate,
  DELETE_CONVERSATION_WORKFLOW_TYPE,
  deleteConversationWorkflowId,
  type DeleteConversationInput,
} from '../../../workflows/conversation-delete.definitions.js';
import { sessionWorkflowId } from '../../../workflows/session.definitions.js';
import { CONVERSATIONS as C, createConversation, insertThread } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { repoRoot } from '../sandbox/docker-harness.js';
import {
  readSse,
  sessionEnv,
  startInProcessWorker,
  useSessionWorld,
  waitFor,
  type SseEvent,
} from './session-harness.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'conv-delete-'));

const bash = (code: string) => ({
  reply: { tool_calls: [{ name: 'execute_bash_commands', arguments: { code } }] },
});

describe.skipIf(noTemporal())('deleting a conversation deletes its data', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
  });
  const world = useSessionWorld({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'process',
    DATA_DIR: dataDir,
    SANDBOX_IDLE_TIMEOUT_MS: '600000',
    // Content-bearing spans (prompts and answers) are what must not outlive the conversation.
    OTEL_RECORD_CONTENT: 'true',
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const db = () => world.fx.api.server.deps.db;
  const workspaceOf = (agentId: string, conversationId: string) =>
    path.join(
      dataDir,
      'sandboxes',
      sandboxName({ projectId: world.fx.projectId, agentId, conversationId }),
      'workspace',
    );
  const del = (id: string) =>
    world.fx.api.request('DELETE', `${C}/${encodeURIComponent(id)}?project_id=${world.fx.projectId}`);
  const count = async (table: string, column: string, values: string[]) =>
    Number((await db()(table).whereIn(column, values).count<{ n: string }>('* as n').first())?.n ?? 0);

  /** Flushes this process's spans until `traceId` holds the turn's model call. */
  async function spansOfTurn(
    traceId: string,
  ): Promise<Array<{ name: string; conversation_id: string | null }>> {
    return waitFor(
      async () => {
        await currentTelemetry()?.flush();
        const spans = await db()('spans')
          .where({ trace_id: traceId })
          .select<Array<{ name: string; conversation_id: string | null }>>('name', 'conversation_id');
        return spans.some((s) => s.name === 'chat gpt-test') &&
          spans.some((s) => s.name === 'RunActivity:callModel')
          ? spans
          : undefined;
      },
      20_000,
      'the turn spans',
    );
  }

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
      10_000,
      `${workflowId} to be deleted`,
    );
  }

  it('removes its rows, its session, its workspace and the traces of its turns; another conversation keeps its own', async () => {
    const agent = await world.fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const goneId = `del-${randomUUID()}`;
    world.fx.vendor.script(bash('echo the secret > notes.txt'), { reply: { text: 'noted' } });
    const turn = (
      await world.fx.converse({ agent_id: agent.id, conversation_id: goneId, message: 'keep this' })
    ).body.data;
    expect(turn.status).toBe('completed');
    // A session that ended (idle) and started again: two runs of its workflow, both to be deleted.
    const firstRun = (await world.client.workflow.getHandle(turn.workflow_id).describe()).runId;
    await world.client.workflow.getHandle(turn.workflow_id).terminate('as if it had gone idle');
    world.fx.vendor.script({ reply: { text: 'again' } });
    const later = (
      await world.fx.converse({ agent_id: agent.id, conversation_id: goneId, message: 'once more' })
    ).body.data;
    expect(later.status).toBe('completed');
    world.fx.vendor.script(bash('echo mine > mine.txt'), { reply: { text: 'kept' } });
    const kept = (await world.fx.converse({ agent_id: agent.id, message: 'and this' })).body.data;
    expect(kept.status).toBe('completed');

    const conv = (await db()('conversations').where({ project_id: world.fx.projectId, id: goneId }).first())!;
    const threadIds = (await db()('threads').where({ conversation_pk: conv.pk }).select('id')).map(
      (t: { id: string }) => t.id,
    );
    // A summary as the llm summarizer writes it: it must go too.
    await db()('thread_summaries').insert({
      thread_id: threadIds[0]!,
      through_seq: 1,
      content: 'the secret',
    });
    const runIds = (await db()('runs').where({ conversation_pk: conv.pk }).select('id')).map(
      (r: { id: string }) => r.id,
    );
    expect(await count('run_events', 'run_id', runIds)).toBeGreaterThan(0);
    expect(await count('messages', 'thread_id', threadIds)).toBeGreaterThan(0);
    const spans = await spansOfTurn(turn.trace_id!);
    expect(spans.some((s) => s.conversation_id === goneId)).toBe(true);
    await spansOfTurn(later.trace_id!);
    await spansOfTurn(kept.trace_id!);
    expect(await readFile(path.join(workspaceOf(agent.id, goneId), 'notes.txt'), 'utf8')).toBe(
      'the secret\n',
    );
    expect(existsSync(workspaceOf(agent.id, kept.conversation_id))).toBe(true);
    await world.client.workflow.getHandle(turn.workflow_id).describe();

    const res = await del(goneId);
    expect(res.body).toEqual({ error: false, message: 'OK', data: {}, status: 200, errorDetails: {} });

    expect(
      (await world.fx.api.request('GET', `${C}/${goneId}?project_id=${world.fx.projectId}`)).status,
    ).toBe(404);
    expect(await count('conversations', 'pk', [conv.pk])).toBe(0);
    expect(await count('threads', 'id', threadIds)).toBe(0);
    expect(await count('messages', 'thread_id', threadIds)).toBe(0);
    expect(await count('thread_summaries', 'thread_id', threadIds)).toBe(0);
    expect(await count('runs', 'id', runIds)).toBe(0);
    expect(await count('run_events', 'run_id', runIds)).toBe(0);
    expect(await count('spans', 'trace_id', [turn.trace_id!, later.trace_id!])).toBe(0);
    expect(await count('spans', 'conversation_id', [goneId])).toBe(0);
    expect(existsSync(path.dirname(workspaceOf(agent.id, goneId)))).toBe(false);
    // The running session is deleted at once; Temporal deletes the earlier, closed run about a
    // minute later (after its history service acknowledges the close): the deletion asked for it.
    await sessionGone(turn.workflow_id);
    const deletion = await world.client.workflow
      .getHandle(deleteConversationWorkflowId(conv.pk))
      .fetchHistory();
    const ended = deletion.events?.find((e) => e.activityTaskCompletedEventAttributes)
      ?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    expect(JSON.parse(new TextDecoder().decode(ended!))).toContain(`${turn.workflow_id}@${firstRun}`);

    // The other conversation of the same agent: untouched.
    expect((await world.fx.api.request('GET', `${C}/${kept.conversation_id}`)).status).toBe(200);
    expect(await count('runs', 'id', [kept.run_id])).toBe(1);
    expect(await count('spans', 'trace_id', [kept.trace_id!])).toBeGreaterThan(0);
    expect(await readFile(path.join(workspaceOf(agent.id, kept.conversation_id), 'mine.txt'), 'utf8')).toBe(
      'mine\n',
    );
    await world.client.workflow.getHandle(kept.workflow_id).describe();
  });

  it('a conversation recreated under a deleted id starts with an empty workspace', async () => {
    const agent = await world.fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const id = `again-${randomUUID()}`;
    world.fx.vendor.script(bash('echo the secret > notes.txt'), { reply: { text: 'noted' } });
    expect(
      (await world.fx.converse({ agent_id: agent.id, conversation_id: id, message: 'remember zebra-42' }))
        .body.data.status,
    ).toBe('completed');
    expect((await del(id)).status).toBe(200);

    world.fx.vendor.reset();
    world.fx.vendor.script(bash('cat notes.txt; ls -A | wc -l'), { reply: { text: 'read' } });
    const again = await world.fx.converse({ agent_id: agent.id, conversation_id: id, message: 'read' });
    expect(again.body.data.status).toBe('completed');
    const result = world.fx.vendor.received[1]!.body as {
      messages: Array<{ role: string; content: string }>;
    };
    const output = JSON.parse(result.messages.filter((m) => m.role === 'tool').at(-1)!.content) as {
      stdout: string;
      stderr: string;
    };
    expect(output.stderr).toContain('No such file or directory');
    expect(output.stdout.trim()).toBe('0');
    // Nor does the new session see the old transcript.
    expect(JSON.stringify(world.fx.vendor.received[0]!.body)).not.toContain('zebra-42');
  });

  it('a delete in the middle of a turn stops it: the stream ends cancelled, nothing is written back', async () => {
    const agent = await world.fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const id = `mid-${randomUUID()}`;
    world.fx.vendor.reset();
    world.fx.vendor.script(bash('sleep 3; echo late > late.txt'), { reply: { text: 'never sent' } });
    const seen: SseEvent[] = [];
    const controller = new AbortController();
    const reading = readSse(
      `${world.fx.api.url}/api/agent-server/converse?project_id=${world.fx.projectId}`,
      {
        method: 'POST',
        body: { agent_id: agent.id, conversation_id: id, message: 'take your time', stream: true },
        signal: controller.signal,
      },
      (ev) => seen.push(ev),
    );
    await waitFor(() => (seen.some((e) => e.event === 'tool_call.started') ? true : undefined), 30_000);
    const conv = (await db()('conversations').where({ project_id: world.fx.projectId, id }).first())!;

    expect((await del(id)).status).toBe(200);
    const timer = setTimeout(() => controller.abort(), 10_000);
    const events = await reading.finally(() => clearTimeout(timer));
    expect(events.at(-1)).toMatchObject({ event: 'run.cancelled', data: { reason: 'conversation_deleted' } });

    // Past the command's end: nothing came back.
    await new Promise((r) => setTimeout(r, 4_000));
    await currentTelemetry()?.flush();
    expect(await count('conversations', 'pk', [conv.pk])).toBe(0);
    expect(await count('runs', 'conversation_pk', [conv.pk])).toBe(0);
    expect(existsSync(path.dirname(workspaceOf(agent.id, id)))).toBe(false);
    expect(world.fx.vendor.received.length).toBe(1);
    await sessionGone(sessionWorkflowId(agent.id, id));
  });

  it('sweeps spans exported after the delete, and not those of a conversation recreated under the id', async () => {
    const conv = await createConversation(world.fx.api, world.fx.projectId);
    const pk = (await db()('conversations').where({ project_id: world.fx.projectId, id: conv.id }).first())!
      .pk;
    const input: DeleteConversationInput = {
      projectId: world.fx.projectId,
      conversationPk: pk,
      conversationId: conv.id,
      sessions: [],
      lateSpanSweepsMs: [1_000],
    };
    const workflowId = deleteConversationWorkflowId(pk);
    const result = await world.client.workflow.executeUpdateWithStart(awaitDeletionUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation(DELETE_CONVERSATION_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: world.fx.env.TEMPORAL_TASK_QUEUE!,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    expect(result).toEqual({ deleted: true });

    const span = (traceId: string, startedMsAgo: number, conversationId: string | null) => {
      const start = new Date(Date.now() - startedMsAgo);
      return {
        trace_id: traceId,
        span_id: randomUUID().replace(/-/g, '').slice(0, 16),
        name: conversationId ? 'chat gpt-test' : 'RunActivity:callModel',
        kind: conversationId ? 'CLIENT' : 'INTERNAL',
        service_name: 'agent-server-worker',
        start_time: start,
        end_time: new Date(start.getTime() + 5),
        duration_ms: 5,
        status_code: 'UNSET',
        project_id: conversationId ? world.fx.projectId : null,
        conversation_id: conversationId,
      };
    };
    const late = randomUUID().replace(/-/g, '');
    const recreated = randomUUID().replace(/-/g, '');
    // A model call of the deleted conversation that ended after the delete, and its parent activity.
    await db()('spans').insert([span(late, 60_000, conv.id), span(late, 61_000, null)]);
    // The same id, recreated after the delete: its spans start later.
    await db()('spans').insert([span(recreated, -5_000, conv.id)]);

    await world.client.workflow.getHandle(workflowId).result();
    expect(await count('spans', 'trace_id', [late])).toBe(0);
    expect(await count('spans', 'trace_id', [recreated])).toBe(1);
  });

  it('without a worker the DELETE answers 503; the deletion it accepted finishes once a worker is back', async () => {
    const env = sessionEnv({ DATA_DIR: dataDir });
    const conv = await createConversation(world.fx.api, world.fx.projectId);
    const agent = await world.fx.agent();
    const threadId = await insertThread(world.fx.api, world.fx.projectId, conv.id, agent.id);
    const service = new ConversationsService(new ConversationsRepository(db()), undefined, {
      client: world.client,
      taskQueue: env.TEMPORAL_TASK_QUEUE!,
      waitMs: 1_500,
      logger: createLogger('fatal'),
    });
    await expect(service.delete(conv.id, world.fx.projectId)).rejects.toMatchObject({ status: 503 });
    expect(await count('threads', 'id', [threadId])).toBe(1);

    const worker = await startInProcessWorker(env);
    try {
      await waitFor(
        async () => ((await count('threads', 'id', [threadId])) === 0 ? true : undefined),
        30_000,
      );
      expect(await count('conversations', 'id', [conv.id])).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});
