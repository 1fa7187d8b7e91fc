/**
 * The console's Usage page in a real browser against a real stack: gateway
 * calls made with the official OpenAI SDK under a virtual key (the scripted
 * vendor answering) show up as charts per key and per model, with the key's
 * budget burn-down; an agent's turn in a project without a key shows up
 * under "no key".
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import {
  createModel,
  createProvider,
  createVirtualKey,
  type ModelData,
  type ProviderData,
  type VirtualKeyData,
} from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';
import { createDb, migrateLatest } from '../../../core/db/knex.js';
import { appErrors, openIn, settled } from './form-helpers.js';

describe.skipIf(noTemporal() || noBrowser())('console: usage', () => {
  let stack: ConsoleStack;
  let provider: ProviderData;
  let key: VirtualKeyData & { secret_key: string };
  let projectId: string;
  let model: ModelData;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;

  beforeAll(async () => {
    // A database of its own: the every-key chart shows the 20 busiest keys of the window,
    // and the run's other tests make busier ones in the same hour.
    scratch = await createScratchDatabase('console_usage');
    const db = createDb(scratch.url, { max: 1 });
    await migrateLatest(db);
    await db.destroy();
    stack = await startConsoleStack({ DATABASE_URL: scratch.url });
    projectId = (await createProject(stack.api)).id;
    provider = await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    // Priced, so calls have a cost (and a key with a budget may call it).
    model = await createModel(stack.api, projectId, {
      provider_id: provider.id,
      model_id: 'gpt-test',
      pricing: { input_per_million_usd: 1000, output_per_million_usd: 2000 },
    });
    key = await createVirtualKey(stack.api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
      budget: { max_usd: 1, period: 'month' },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await scratch?.drop();
  });

  it('charts requests, tokens and cost per key and per model after gateway calls, with the budget burn-down', async () => {
    const client = new OpenAI({
      baseURL: `${stack.api.url}/api/gateway/openai/v1`,
      apiKey: key.secret_key,
      maxRetries: 0,
    });
    for (let i = 0; i < 3; i++) {
      const answer = await client.chat.completions.create({
        model: `${provider.name}/gpt-test`,
        messages: [{ role: 'user', content: `hello ${i}` }],
        max_tokens: 50,
      });
      expect(answer.choices[0]?.message.content).toBe('Hello from the scripted vendor');
    }

    // One key: per model, with its budget.
    const page = await openIn(stack, `/usage?key=${key.id}`, projectId);
    const requests = page.getByRole('figure', { name: 'Requests' });
    await requests.locator('.recharts-surface').first().waitFor();
    for (const name of ['Tokens', 'Cost', 'Budget burn-down'])
      await page.getByRole('figure', { name }).locator('.recharts-surface').first().waitFor();
    expect(await page.getByText('Requests', { exact: true }).first().locator('..').textContent()).toContain(
      '3',
    );
    expect(await page.getByRole('figure', { name: 'Budget burn-down' }).textContent()).toContain(
      '$1.00 per month',
    );
    // Bars for the calls: the current hour has one.
    expect(await requests.locator('.recharts-bar-rectangle path').count()).toBeGreaterThan(0);
    const table = page.getByRole('table', { name: 'Usage per Model' });
    const row = table.getByRole('row', { name: new RegExp(`${provider.name}/gpt-test`) });
    await row.waitFor();
    // 3 calls × (11 in, 5 out) tokens from the scripted vendor.
    expect((await row.locator('td').allTextContents()).slice(1, 5)).toEqual(['3', '0', '33', '15']);

    await settled(page);
    await stack.screenshot(page, 'usage');

    // An agent's turn in this project, which has no virtual key: counted under "no key".
    const prompt = await createPrompt(stack.api, projectId, { template: 'Be brief.' });
    const agent = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${projectId}`,
      {
        name: uniqueName('agent'),
        model_id: model.id,
        prompt_id: prompt.id,
      },
    );
    const turn = await stack.api.request<{ status: string }>(
      'POST',
      `/api/agent-server/converse?project_id=${projectId}`,
      { agent_id: agent.body.data.id, message: 'hello' },
    );
    expect(turn.body.data.status).toBe('completed');

    // Every key, per key: this key's series and the keyless turn's are in the legend and the table.
    const all = await openIn(stack, '/usage?group=key', projectId);
    const chart = all.getByRole('figure', { name: 'Requests' });
    await chart.locator('.recharts-surface').first().waitFor();
    await chart.getByText(key.name).first().waitFor();
    await chart.getByText('no key').first().waitFor();
    const keys = all.getByRole('table', { name: 'Usage per Virtual key' });
    const keyless = keys.getByRole('row', { name: /^no key/ });
    // One turn: one call of 11 in and 5 out tokens, at 1000 and 2000 USD per million.
    expect((await keyless.locator('td').allTextContents()).slice(1, 6)).toEqual([
      '1',
      '0',
      '11',
      '5',
      '$0.0210',
    ]);
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
