/**
 * A model that names no provider is served by the only provider of its type:
 * its agent's turns call that provider. Once a second provider of the type
 * exists, the model's turns fail saying what to set, not a bare "no provider".
 * Providers are global, and the run's database holds every other test's: this
 * test has a database and a server of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest } from '../../../core/db/knex.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import { createProvider } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';
import { noTemporal } from '../../helpers/services.js';
import { CONVERSE, sessionEnv, startInProcessWorker, type RunData } from './session-harness.js';

describe.skipIf(noTemporal())('a model naming no provider, at turn time', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startInProcessWorker>>;
  let vendor: ScriptedVendor;

  beforeAll(async () => {
    scratch = await createScratchDatabase('sole_provider');
    const db = createDb(scratch.url, { max: 2 });
    await migrateLatest(db);
    await db.destroy();
    const env = sessionEnv({ DATABASE_URL: scratch.url });
    [api, worker, vendor] = await Promise.all([
      startTestApi(env),
      startInProcessWorker(env),
      startOpenAiVendor(),
    ]);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await vendor?.close();
    await scratch?.drop();
  });

  it('is served by the only provider of its type; with a second one its turn names provider_id', async () => {
    const only = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
    const project = await createProject(api);
    const model = await api.request<{ id: string; provider_id: string | null }>(
      'POST',
      `/api/agent-server/models?project_id=${project.id}`,
      { name: uniqueName('model'), model_id: 'gpt-test', provider_type: 'openai' },
    );
    expect(model.status).toBe(200);
    expect(model.body.data.provider_id).toBeNull();
    const prompt = await createPrompt(api, project.id, { template: 'You are helpful.' });
    const agent = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${project.id}`,
      {
        name: uniqueName('agent'),
        model_id: model.body.data.id,
        prompt_id: prompt.id,
      },
    );
    expect(agent.status).toBe(200);
    const converse = (message: string) =>
      api.request<RunData>('POST', `${CONVERSE}?project_id=${project.id}`, {
        agent_id: agent.body.data.id,
        message,
      });

    vendor.script({ reply: { text: 'served by the only provider' } });
    const served = await converse('Hi');
    expect(served.status).toBe(200);
    expect(served.body.data.status).toBe('completed');
    expect(served.body.data.output?.content).toBe('served by the only provider');
    expect(vendor.received.at(-1)?.body).toMatchObject({ model: 'gpt-test' });

    const second = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
    expect(second.id).not.toBe(only.id);
    const refused = await converse('Hi again');
    expect(refused.status).toBe(200);
    expect(refused.body.data.status).toBe('failed');
    expect(refused.body.data.error).toMatchObject({ code: 'model_unavailable' });
    expect(refused.body.data.error?.message).toMatch(/names no provider.*set its provider_id/);
  });
});
