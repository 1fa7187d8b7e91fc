import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { createDb, type Db } from '../../core/db/knex.js';
import { createLogger } from '../../core/logger.js';
import { startWorker, type RunningWorker } from '../../activities/worker.js';
import { createTestActivities } from '../fixtures/test-activities.js';
import { addEntryUpdate, closeUpdate, entriesQuery, ledgerWorkflow } from '../fixtures/workflows/index.js';
import { databaseUrl, noTemporal, temporalAddress } from '../helpers/services.js';

const require = createRequire(import.meta.url);

describe.skipIf(noTemporal())('a real Worker against the Temporal dev server', () => {
  const taskQueue = `test-${randomUUID()}`;
  let db: Db;
  let worker: RunningWorker;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    const config = loadConfig({
      DATABASE_URL: databaseUrl(),
      TEMPORAL_ADDRESS: temporalAddress()!,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    });
    db = createDb(config.databaseUrl!);
    worker = await startWorker(config, createLogger('warn'), db, {
      taskQueue,
      workflowsPath: require.resolve('../fixtures/workflows/index.ts'),
      activities: createTestActivities(db),
    });
    connection = await Connection.connect({ address: temporalAddress()! });
    client = new Client({ connection });
  });

  afterAll(async () => {
    await worker?.shutdown();
    await connection?.close();
    await db?.destroy();
  });

  it('starts a workflow with update-with-start, runs its activities against Postgres, and answers queries', async () => {
    const [project] = await db('projects')
      .insert({ name: `wf-${randomUUID()}` })
      .returning('*');
    const workflowId = `ledger/${project!.id}`;
    const start = () =>
      new WithStartWorkflowOperation(ledgerWorkflow, {
        workflowId,
        taskQueue,
        args: [project!.id],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });

    const first = await client.workflow.executeUpdateWithStart(addEntryUpdate, {
      args: ['a'],
      startWorkflowOperation: start(),
    });
    const second = await client.workflow.executeUpdateWithStart(addEntryUpdate, {
      args: ['b'],
      startWorkflowOperation: start(),
    });
    expect([first, second]).toEqual([1, 2]);

    const handle = client.workflow.getHandle(workflowId);
    expect(await handle.query(entriesQuery)).toEqual(['a', 'b']);
    await handle.executeUpdate(closeUpdate);
    expect(await handle.result()).toBe(2);

    const row = await db('projects').where({ id: project!.id }).first();
    expect(row?.description).toBe('a,b');
  });
});
