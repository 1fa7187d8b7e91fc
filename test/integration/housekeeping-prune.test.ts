/**
 * The worker's housekeeping beside run events: webhook deliveries that ended
 * (delivered or failed) longer ago than their retention are deleted, pending
 * ones never; budget reservations past their expiry (a dead worker's) are
 * deleted, live ones kept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import { databaseUrl } from '../helpers/services.js';

describe('housekeeping of webhook deliveries and budget reservations', () => {
  let api: TestApi;
  let db: Db;
  beforeAll(async () => {
    api = await startTestApi();
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  it('prunes deliveries that ended before the retention, never a pending one', async () => {
    const project = await createProject(api);
    const hook = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/webhooks?project_id=${project.id}`,
      {
        url: 'https://hooks.example.com/in',
        events: ['eval.completed'],
      },
    );
    expect(hook.status).toBe(200);
    const old = new Date(Date.now() - 40 * 86_400_000);
    /** A delivery stored with this status, last changed at `updated`. */
    const delivery = async (status: 'pending' | 'delivered' | 'failed', updated: Date) => {
      const [row] = await db('webhook_deliveries')
        .insert({
          project_id: project.id,
          webhook_id: hook.body.data.id,
          run_id: null,
          event_type: 'eval.completed',
          event_key: `eval.completed/${randomUUID()}`,
          url: 'https://hooks.example.com/in',
          payload: '{}',
        })
        .returning('id');
      await db('webhook_deliveries').where({ id: row!.id }).update({ status, updated_at: updated });
      return row!.id;
    };
    const oldDelivered = await delivery('delivered', old);
    const oldFailed = await delivery('failed', old);
    const oldPending = await delivery('pending', old);
    const recent = await delivery('delivered', new Date());
    const ids = [oldDelivered, oldFailed, oldPending, recent];

    expect(await new WebhooksRepository(db).prune(30)).toBeGreaterThanOrEqual(2);
    const left = (await db('webhook_deliveries').whereIn('id', ids).select('id')).map((r) => r.id);
    expect(left.sort()).toEqual([oldPending, recent].sort());
    expect(left).not.toContain(oldDelivered);
    expect(left).not.toContain(oldFailed);
  });

  it('prunes budget reservations past their expiry and keeps live ones', async () => {
    const project = await createProject(api);
    const [conversation] = await db('conversations')
      .insert({ project_id: project.id, id: randomUUID(), context: '{}' })
      .returning('pk');
    const [thread] = await db('threads').insert({ conversation_pk: conversation!.pk }).returning('id');
    const [run] = await db('runs')
      .insert({
        project_id: project.id,
        conversation_pk: conversation!.pk,
        thread_id: thread!.id,
        message_id: randomUUID(),
        request_hash: 'x',
        workflow_id: `session/${randomUUID()}`,
      })
      .returning('id');
    const runId = run!.id;
    const scopeId = randomUUID();
    await db('budget_reservations').insert([
      {
        run_id: runId,
        step: 9001,
        scope: 'agent',
        scope_id: scopeId,
        usd: 1,
        tokens: 10,
        expires_at: new Date(Date.now() - 1000),
      },
      {
        run_id: runId,
        step: 9002,
        scope: 'agent',
        scope_id: scopeId,
        usd: 1,
        tokens: 10,
        expires_at: new Date(Date.now() + 60_000),
      },
    ]);
    expect(await new BudgetsRepository(db).pruneExpired()).toBeGreaterThanOrEqual(1);
    const left = await db('budget_reservations').where({ scope_id: scopeId }).select('step');
    expect(left.map((r) => r.step)).toEqual([9002]);
  });
});
