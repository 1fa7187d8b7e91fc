import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { WithStartWorkflowOperation } from '@temporalio/client';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { createLogger } from '../../../core/logger.js';
import { tracing } from '../../../api/middleware/tracing.js';
import { installTelemetry, type Telemetry } from '../../../core/telemetry/telemetry.js';
import { TemporalClientHolder } from '../../../api/temporal/client.js';
import { startWorker, type RunningWorker } from '../../../activities/worker.js';
import { createTestActivities } from '../../fixtures/test-activities.js';
import { addEntryUpdate, closeUpdate, ledgerWorkflow } from '../../fixtures/workflows/index.js';
import { databaseUrl, noTemporal, temporalAddress } from '../../helpers/services.js';

const require = createRequire(import.meta.url);

interface Row {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  attributes: Record<string, unknown>;
}

/**
 * One process holds both roles, as under `npm start`: an HTTP server using the
 * API's tracing middleware and Temporal client starts the ledger workflow
 * (tests' fixture), whose activity writes to Postgres on a real worker.
 */
describe.skipIf(noTemporal())('a request that starts a workflow is one trace', () => {
  const taskQueue = `test-traces-${randomUUID()}`;
  let telemetry: Telemetry;
  let db: Db;
  let worker: RunningWorker;
  let temporal: TemporalClientHolder;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const config = loadConfig({
      DATABASE_URL: databaseUrl(),
      TEMPORAL_ADDRESS: temporalAddress()!,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    });
    const logger = createLogger('warn');
    telemetry = installTelemetry('api', config, logger)!;
    db = createDb(config.databaseUrl!);
    worker = await startWorker(config, logger, db, {
      taskQueue,
      workflowsPath: require.resolve('../../fixtures/workflows/index.ts'),
      activities: createTestActivities(db),
    });
    temporal = new TemporalClientHolder({ address: temporalAddress()!, namespace: 'default', taskQueue });
    const app = new Koa();
    app.use(tracing(telemetry));
    app.use(async (ctx) => {
      const projectId = ctx.path.slice(1);
      const n = await temporal.client.workflow.executeUpdateWithStart(addEntryUpdate, {
        args: ['traced'],
        startWorkflowOperation: new WithStartWorkflowOperation(ledgerWorkflow, {
          workflowId: `ledger/${projectId}`,
          taskQueue,
          args: [projectId],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
      ctx.body = { n };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.close();
    await worker?.shutdown();
    await temporal?.close();
    await db?.destroy();
  });

  it('links the HTTP span, the workflow, its activity and the activity query, each under its role', async () => {
    const [project] = await db('projects')
      .insert({ name: `trace-wf-${randomUUID()}` })
      .returning('*');
    const res = await fetch(`${url}/${project!.id}`);
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id')!;
    const handle = temporal.client.workflow.getHandle(`ledger/${project!.id}`);
    await handle.executeUpdate(closeUpdate);
    await handle.result();

    let spans: Row[] = [];
    // Workflow spans arrive when their workflow task completes: poll briefly.
    for (let i = 0; i < 50; i++) {
      await telemetry.flush();
      spans = await db('spans').where({ trace_id: traceId }).orderBy('start_time').select<Row[]>('*');
      if (
        spans.some((s) => s.name === 'RunActivity:recordEntry') &&
        spans.some((s) => s.name === 'RunWorkflow:ledgerWorkflow')
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const find = (pred: (s: Row) => boolean, what: string) => {
      const s = spans.find(pred);
      expect(s, `${what} in ${spans.map((x) => x.name).join(', ')}`).toBeDefined();
      return s!;
    };
    const ancestors = (s: Row): string[] => {
      const names: string[] = [];
      for (
        let p = s.parent_span_id && byId.get(s.parent_span_id);
        p;
        p = p.parent_span_id && byId.get(p.parent_span_id)
      ) {
        names.push(p.name);
      }
      return names;
    };

    const http = find((s) => s.kind === 'SERVER', 'HTTP server span');
    expect(http.service_name).toBe('agent-server-api');
    const client = find((s) => s.name === 'UpdateWithStartWorkflow:addEntry', 'client span');
    expect(client.parent_span_id).toBe(http.span_id);
    expect(client.service_name).toBe('agent-server-api');
    const run = find((s) => s.name === 'RunWorkflow:ledgerWorkflow', 'workflow run span');
    expect(run.service_name).toBe('agent-server-worker');
    const activity = find((s) => s.name === 'RunActivity:recordEntry', 'activity span');
    expect(activity.service_name).toBe('agent-server-worker');
    expect(ancestors(activity)).toContain(http.name);
    const query = find(
      (s) =>
        s.parent_span_id === activity.span_id &&
        String(s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql',
      'query span under the activity',
    );
    expect(query.service_name).toBe('agent-server-worker');
    // Every span of the trace hangs from the HTTP span.
    for (const s of spans) if (s !== http) expect(ancestors(s), s.name).toContain(http.name);
  });
});
