/**
 * The console's Usage page in a real browser against a real stack: gateway
 * calls made with the official OpenAI SDK under a virtual key (the scripted
 * vendor answering) show up as charts per key and per model, with the key's
 * budget burn-down.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject } from '../../helpers/factories.js';
import {
  createModel,
  createProvider,
  createVirtualKey,
  type ProviderData,
  type VirtualKeyData,
} from '../../helpers/factories/config.js';
import { noTemporal } from '../../helpers/services.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';
import { createDb, migrateLatest } from '../../../core/db/knex.js';
import { appErrors, openIn, settled } from './form-helpers.js';

describe.skipIf(noTemporal() || noBrowser())('console: usage', () => {
  let stack: ConsoleStack;
  let provider: ProviderData;
  let key: VirtualKeyData & { secret_key: string };
  let projectId: string;
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
    await createModel(stack.api, projectId, {
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

    // Every key, per key: this key's series is in the legend.
    const all = await openIn(stack, '/usage?group=key', projectId);
    const chart = all.getByRole('figure', { name: 'Requests' });
    await chart.locator('.recharts-surface').first().waitFor();
    await chart.getByText(key.name).first().waitFor();
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
