/**
 * bench/converse/temporal-floor: what a Temporal Update costs on this machine
 * by itself, against a trivial workflow on the same dev server the converse
 * benchmark uses (in memory, eager activities).
 * The floor under a session turn: the API sends an Update, the workflow task
 * accepts it and schedules the model-call activity.
 *
 *  - update (handler returns at once), executeUpdate: the full round trip;
 *  - startUpdate until ACCEPTED on a running workflow;
 *  - startUpdateWithStart (USE_EXISTING) until ACCEPTED on a running workflow;
 *  - for the last two, also when the handler's activity started.
 * The Worker runs in this process (same clock; it shares the event loop).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { findTemporalCli, startTemporalDevServer } from '../../scripts/lib/temporal-dev-server.js';
import { freePort } from '../../test/helpers/ports.js';
import { floorUpdate } from './floor.workflow.js';

const N = Number(process.env.BENCH_TURNS ?? 200);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const cli = findTemporalCli();
if (!cli) throw new Error('no temporal CLI: run scripts/install-temporal or set TEMPORAL_CLI_PATH');
const temporal = await startTemporalDevServer({ cliPath: cli, port: await freePort() });
const taskQueue = `floor-${randomUUID()}`;

// The activity records when it started (epoch ms with sub-ms precision).
let activityStartedAt = 0;
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: temporal.address }),
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./floor.workflow.ts', import.meta.url)),
  activities: {
    touch(n: number) {
      activityStartedAt = performance.timeOrigin + performance.now();
      return Promise.resolve(n);
    },
  },
});
const running = worker.run();
const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
const now = () => performance.timeOrigin + performance.now();

/** `fn` may return when its call was accepted (then that is the figure, the rest is waited out). */
async function timed(label: string, fn: (i: number) => Promise<number | void>): Promise<void> {
  const total: number[] = [];
  const toActivity: number[] = [];
  for (let i = 0; i < N + 20; i++) {
    activityStartedAt = 0;
    const t = now();
    const accepted = await fn(i);
    const end = typeof accepted === 'number' ? accepted : now();
    if (i < 20) continue;
    total.push(end - t);
    if (activityStartedAt) toActivity.push(activityStartedAt - t);
  }
  const extra = toActivity.length ? `; activity started at p50 ${pct(toActivity, 50).toFixed(1)} ms` : '';
  console.log(
    `${label.padEnd(58)} p50 ${pct(total, 50).toFixed(1)} ms  p99 ${pct(total, 99).toFixed(1)} ms${extra}`,
  );
}

const id = `floor-${randomUUID()}`;
const handle = await client.workflow.start('floorWorkflow', { workflowId: id, taskQueue });
const withStart = () =>
  new WithStartWorkflowOperation('floorWorkflow', {
    workflowId: id,
    taskQueue,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });

await timed('executeUpdate, handler returns at once', (i) =>
  handle.executeUpdate(floorUpdate, { args: [i, false], updateId: randomUUID() }).then(() => undefined),
);
await timed('executeUpdate, handler runs one activity', (i) =>
  handle.executeUpdate(floorUpdate, { args: [i, true], updateId: randomUUID() }).then(() => undefined),
);
await timed('startUpdate until ACCEPTED (handler runs one activity)', async (i) => {
  const h = await handle.startUpdate(floorUpdate, {
    args: [i, true],
    updateId: randomUUID(),
    waitForStage: 'ACCEPTED',
  });
  const at = now();
  await h.result();
  return at;
});
await timed('startUpdateWithStart until ACCEPTED (existing workflow)', async (i) => {
  const h = await client.workflow.startUpdateWithStart(floorUpdate, {
    args: [i, true],
    updateId: randomUUID(),
    waitForStage: 'ACCEPTED',
    startWorkflowOperation: withStart(),
  });
  const at = now();
  await h.result();
  return at;
});
await timed('signal-with-start round trip (no result)', async () => {
  await client.workflow.signalWithStart('floorWorkflow', {
    workflowId: id,
    taskQueue,
    signal: 'nothing',
    signalArgs: [],
  });
});

worker.shutdown();
await running;
await temporal.stop();
process.exit(0);
