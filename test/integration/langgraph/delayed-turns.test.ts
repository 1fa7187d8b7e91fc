/**
 * Turns started from the worker, against the real stack (PostgreSQL, the
 * Temporal dev server, an in-process worker, the scripted model): a stored
 * run handed to its session after a delay (`startDelayedTurn`, the Agent
 * Protocol's `after_seconds`), never before its durable timer fired and at
 * most once per run; and the activity that stores and delivers a turn,
 * idempotent by the message id its caller gives.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeTurnRun } from '../../../activities/turns/session-delivery.js';
import { createTurnActivities } from '../../../activities/turns/turn-activities.js';
import { startDelayedTurn } from '../../../api/services/delayed-turns.service.js';
import { loadConfig } from '../../../core/config.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { createLogger } from '../../../core/logger.js';
import { RunsRepository } from '../../../core/repositories/runs.repository.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { lastUser } from '../evals/eval-harness.js';
import { useSessionWorld, waitFor, type RunData } from '../sessions/session-harness.js';

const skip = noTemporal();

describe.skipIf(skip)('turns started from the worker', () => {
  const world = useSessionWorld();
  let db: Db;
  const logger = createLogger('error');
  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db?.destroy();
  });

  const deps = () => ({
    temporal: { client: world.client },
    config: { temporalTaskQueue: world.fx.env.TEMPORAL_TASK_QUEUE! },
    logger,
  });
  const answering = () =>
    (world.fx.vendor.respond = (body) => ({ reply: { text: `answer: ${lastUser(body)}` } }));

  async function conversationRuns(conversationId: string): Promise<RunData[]> {
    const res = await world.fx.api.request<RunData[]>(
      'GET',
      `/api/agent-server/conversations/${conversationId}/runs?project_id=${world.fx.projectId}`,
    );
    return res.body.data;
  }

  it('hands a stored run to its session only once its delay has passed, once per run', async () => {
    answering();
    const agent = await world.fx.agent();
    const conversationId = `delayed-${randomUUID()}`;
    const { run } = await storeTurnRun(db, {
      projectId: world.fx.projectId,
      agentId: agent.id,
      conversationId,
      namespace: 'default',
      messageId: 'later',
      content: 'Remind me later.',
    });
    expect(run.status).toBe('queued');

    const { workflowId } = await startDelayedTurn(deps(), run.id, 2);
    expect(workflowId).toBe(`delayed-turn/${run.id}`);
    // Waiting on its timer: the run has not gone anywhere.
    const handle = world.client.workflow.getHandle(workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await new RunsRepository(db).findById(run.id))?.status).toBe('queued');
    // Asked again for the same run: the same workflow, not a second delivery.
    expect(await startDelayedTurn(deps(), run.id, 0)).toEqual({ workflowId });

    expect(await handle.result()).toEqual({ delivered: true });
    const done = await waitFor(
      async () => {
        const [r] = await conversationRuns(conversationId);
        return r?.status === 'completed' ? r : undefined;
      },
      30_000,
      'the delayed run',
    );
    expect(done.output?.content).toBe('answer: Remind me later.');
    expect(world.fx.vendor.received).toHaveLength(1);

    // The turn started after the timer fired, never before.
    const history = await handle.fetchHistory();
    const fired = history.events?.find((e) => e.timerFiredEventAttributes);
    expect(fired).toBeDefined();
    const firedAt =
      Number(fired!.eventTime!.seconds) * 1000 + Math.floor((fired!.eventTime!.nanos ?? 0) / 1e6);
    const stored = await new RunsRepository(db).findById(run.id);
    expect(stored!.started_at!.getTime()).toBeGreaterThanOrEqual(firedAt);
    const runsOfWorkflow = [];
    for await (const w of world.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runsOfWorkflow.push(w);
    expect(runsOfWorkflow.length).toBeLessThanOrEqual(1);
  });

  it('does not deliver a run that has ended meanwhile', async () => {
    answering();
    const agent = await world.fx.agent();
    const res = await world.fx.converse({ agent_id: agent.id, message: 'now' });
    expect(res.body.data.status).toBe('completed');
    const result: unknown = await world.client.workflow.execute('delayedTurnWorkflow', {
      workflowId: `test-delayed-${randomUUID()}`,
      taskQueue: world.fx.env.TEMPORAL_TASK_QUEUE!,
      args: [{ runId: res.body.data.run_id, delaySeconds: 0 }],
    });
    expect(result).toEqual({ delivered: false, reason: 'the run is completed' });
    expect(world.fx.vendor.received).toHaveLength(1);
  });

  it('refuses a delay out of range naming after_seconds', async () => {
    await expect(startDelayedTurn(deps(), randomUUID(), -1)).rejects.toMatchObject({
      status: 400,
      fields: [expect.objectContaining({ field: 'after_seconds' })],
    });
  });

  it('the turn activity makes one run per message id, however often it is called', async () => {
    answering();
    const agent = await world.fx.agent();
    const config = loadConfig({ ...world.fx.env, PORT: '0' });
    const turns = createTurnActivities({ config, db, logger, temporal: world.client });
    const conversationId = `activity-${randomUUID()}`;
    const request = {
      projectId: world.fx.projectId,
      agentId: agent.id,
      conversationId,
      namespace: 'scheduled',
      messageId: 'firing-1',
      content: 'Only once.',
    };
    // A retried activity (here: two at once, then one after the end) finds the first one's run.
    const [a, b] = await Promise.all([turns.startTurn(request), turns.startTurn(request)]);
    expect(b.runId).toBe(a.runId);
    await waitFor(
      async () => ((await conversationRuns(conversationId))[0]?.status === 'completed' ? true : undefined),
      30_000,
      'the turn',
    );
    const again = await turns.startTurn(request);
    expect(again).toMatchObject({ runId: a.runId, status: 'completed' });
    const runs = await conversationRuns(conversationId);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.output?.content).toBe('answer: Only once.');
    expect(world.fx.vendor.received).toHaveLength(1);

    // The same message id for another message is refused for good (a retry cannot help).
    const refused = await turns
      .startTurn({ ...request, content: 'Something else.' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: 'turn_not_stored', nonRetryable: true });
  });
});
