/**
 * The wait for budget's timers on the real Temporal dev server: the budget's
 * next period wakes the run (`run.resumed` by `period`), and the agent's
 * budget_wait_timeout_ms, when it comes first, ends the wait unresumed. The
 * pause and resumption are recorded by stand-in local activities.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PauseRunArgs, ResumeRunArgs } from '../../../workflows/session.definitions.js';
import { noTemporal, temporalAddress } from '../../helpers/services.js';

const require = createRequire(import.meta.url);

describe.skipIf(noTemporal())("the wait for budget's timers", () => {
  const taskQueue = `budget-wait-${randomUUID()}`;
  const recorded: Array<{ kind: 'pause'; args: PauseRunArgs } | { kind: 'resume'; args: ResumeRunArgs }> = [];
  let worker: Worker;
  let running: Promise<void>;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    worker = await Worker.create({
      connection: await NativeConnection.connect({ address: temporalAddress()! }),
      taskQueue,
      workflowsPath: require.resolve('../../fixtures/workflows/budget-wait.workflow.ts'),
      activities: {
        pauseRun: (args: PauseRunArgs) => {
          recorded.push({ kind: 'pause', args });
          return Promise.resolve();
        },
        resumeRun: (args: ResumeRunArgs) => {
          recorded.push({ kind: 'resume', args });
          return Promise.resolve();
        },
      },
    });
    running = worker.run();
    connection = await Connection.connect({ address: temporalAddress()! });
    client = new Client({ connection });
  }, 60_000);
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
  });

  const run = (resetsInMs: number | null, timeoutMs: number | null) =>
    client.workflow.execute('budgetWaitWorkflow', {
      taskQueue,
      workflowId: `budget-wait-${randomUUID()}`,
      args: [resetsInMs, timeoutMs],
    });

  it("the budget's next period wakes the run", async () => {
    recorded.length = 0;
    await expect(run(1_500, null)).resolves.toBe('resumed');
    expect(recorded.map((r) => r.kind)).toEqual(['pause', 'resume']);
    expect(recorded[0]!.args).toMatchObject({ reason: 'budget', timeoutAt: null });
    expect(recorded[1]!.args).toMatchObject({ reason: 'budget', by: 'period' });
  });

  it('the wait timeout ends the wait first when it comes before the next period', async () => {
    recorded.length = 0;
    await expect(run(60 * 60_000, 1_000)).resolves.toBe('timeout');
    expect(recorded.map((r) => r.kind)).toEqual(['pause']);
    expect((recorded[0]!.args as PauseRunArgs).timeoutAt).not.toBeNull();
  });
});
