import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { databaseUrl } from '../helpers/services.js';

/** Two API replicas on one database: a write on one is seen by the other's cached reads. */
describe('cached reads across replicas', () => {
  let a: TestApi;
  let b: TestApi;
  let db: Db;
  beforeAll(async () => {
    // Both replicas must share SECRETS_KEY, as real replicas do.
    const key = (await import('node:crypto')).randomBytes(32).toString('base64');
    a = await startTestApi({ SECRETS_KEY: key });
    b = await startTestApi({ SECRETS_KEY: key });
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await db.destroy();
  });

  async function agentOn(): Promise<{ id: string }> {
    const project = await createProject(a);
    const insert = async (table: string, row: Record<string, unknown>): Promise<string> => {
      const rows: Array<{ id: string }> = await db(table).insert(row).returning('id');
      return rows[0]!.id;
    };
    const modelId = await insert('models', {
      project_id: project.id,
      name: uniqueName('m'),
      model_id: 'x',
      provider_type: 'openai',
    });
    const promptId = await insert('prompts', { project_id: project.id, name: uniqueName('p') });
    const versionId = await insert('prompt_versions', {
      prompt_id: promptId,
      version: 1,
      template: 't',
      commit_message: 'c',
    });
    await db('prompt_labels').insert({ prompt_id: promptId, label: 'latest', version_id: versionId });
    const res = await a.request<{ id: string }>('POST', `/api/agent-server/agents?project_id=${project.id}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: promptId,
    });
    return res.body.data;
  }

  async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
    const deadline = Date.now() + 3_000;
    for (;;) {
      const v = await read();
      if (ok(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('an update or delete on replica A reaches replica B, whose cache held the old agent', async () => {
    const agent = await agentOn();
    const path = `/api/agent-server/agents/${agent.id}`;
    // Warm B's cache (twice, so the second is served from memory).
    expect((await b.request<{ max_iterations: number }>('GET', path)).body.data.max_iterations).toBe(20);
    expect((await b.request<{ max_iterations: number }>('GET', path)).body.data.max_iterations).toBe(20);

    const patched = await a.request<{ max_iterations: number }>('PATCH', path, { max_iterations: 5 });
    expect(patched.body.data.max_iterations).toBe(5);
    // A sees its own write at once; B within the notification's delivery.
    expect((await a.request<{ max_iterations: number }>('GET', path)).body.data.max_iterations).toBe(5);
    const seen = await eventually(
      () => b.request<{ max_iterations: number }>('GET', path),
      (r) => r.body.data.max_iterations === 5,
    );
    expect(seen.body.data.max_iterations).toBe(5);

    expect((await a.request('DELETE', path)).status).toBe(200);
    const gone = await eventually(
      () => b.request('GET', path),
      (r) => r.status === 404,
    );
    expect(gone.status).toBe(404);
  });

  it('a write made behind the API with a notification is also picked up', async () => {
    const agent = await agentOn();
    const path = `/api/agent-server/agents/${agent.id}`;
    await b.request('GET', path);
    await db.transaction(async (trx) => {
      await trx('agents').where({ id: agent.id }).update({ max_iterations: 9 });
      await trx.raw(`select pg_notify('agent_server_changes', ?)`, [
        JSON.stringify({ table: 'agents', id: agent.id }),
      ]);
    });
    const seen = await eventually(
      () => b.request<{ max_iterations: number }>('GET', path),
      (r) => r.body.data.max_iterations === 9,
    );
    expect(seen.body.data.max_iterations).toBe(9);
    expect((await b.request('GET', `/api/agent-server/agents/${randomUUID()}`)).status).toBe(404);
  });
});
