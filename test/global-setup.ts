/**
 * Provides the real services every integration test talks to:
 * - PostgreSQL: DATABASE_URL when set (CI: the machine's server), else an
 *   embedded one; a fresh database per run with migrations applied.
 * - Temporal: a dev server from the temporal CLI on a free port (in memory).
 * Under CI=true a missing service fails the run instead of skipping tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDb, migrateLatest } from '../core/db/knex.js';
import { startEmbeddedPostgres, type EmbeddedPg } from '../scripts/lib/embedded-postgres.js';
import {
  findTemporalCli,
  startTemporalDevServer,
  type DevServer,
} from '../scripts/lib/temporal-dev-server.js';
import { freePort } from './helpers/ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | null;
    adminDatabaseUrl: string | null;
    temporalAddress: string | null;
  }
}

const CI = process.env.CI === 'true';

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  const teardown = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => console.error('teardown:', err));
  };
  if (process.env.VITEST_NO_SERVICES === '1' && !CI) {
    project.provide('databaseUrl', null);
    project.provide('adminDatabaseUrl', null);
    project.provide('temporalAddress', null);
    return teardown;
  }
  try {
    // PostgreSQL
    let adminUrl = process.env.DATABASE_URL;
    if (!adminUrl) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-test-pg-'));
      const { chmod } = await import('node:fs/promises');
      await chmod(dir, 0o777); // the postgres system user must be able to create its data dir here
      const embedded: EmbeddedPg = await startEmbeddedPostgres({
        dataDir: path.join(dir, 'data'),
        port: await freePort(),
        database: 'postgres',
      });
      cleanups.push(async () => {
        await embedded.stop();
        await rm(dir, { recursive: true, force: true });
      });
      adminUrl = embedded.url;
    }
    const dbName = `agent_test_${Date.now()}_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${dbName} with (force)`);
      await c.end();
    });
    const databaseUrl = withDatabase(adminUrl, dbName);
    const db = createDb(databaseUrl);
    await migrateLatest(db);
    await db.destroy();
    project.provide('databaseUrl', databaseUrl);
    project.provide('adminDatabaseUrl', adminUrl);

    // Temporal
    const cli = findTemporalCli();
    if (!cli) {
      const reason =
        'Temporal CLI not found (TEMPORAL_CLI_PATH, ~/.cache/agent-server/temporal-v1.5.1, PATH); run scripts/install-temporal';
      if (CI) throw new Error(reason);
      console.warn(`\n*** SKIPPING Temporal tests: ${reason} ***\n`);
      project.provide('temporalAddress', null);
    } else {
      const server = await startTemporalOnAFreePort(cli);
      cleanups.push(() => server.stop());
      project.provide('temporalAddress', server.address);
    }
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}

/**
 * A free port can be taken between the check and the server's bind (other
 * processes on the machine pick ports too): one more try on another port
 * before the whole run fails.
 */
async function startTemporalOnAFreePort(cliPath: string): Promise<DevServer> {
  try {
    return await startTemporalDevServer({ cliPath, port: await freePort() });
  } catch (err) {
    console.warn(`the Temporal dev server did not start (${String(err)}); trying another port`);
    return startTemporalDevServer({ cliPath, port: await freePort() });
  }
}
