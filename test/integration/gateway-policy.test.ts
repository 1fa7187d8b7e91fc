import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { BudgetExceededError, RateLimitedError, UnpricedModelError } from '../../core/metering/errors.js';
import { GatewayPolicyService } from '../../core/metering/gateway-policy.js';
import type { Admission, MeteredKey } from '../../core/metering/types.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import { createModel, createProvider, createVirtualKey } from '../helpers/factories/config.js';
import { databaseUrl } from '../helpers/services.js';

/** Two services with their own connection pools stand for two API replicas. */
describe('gateway rate limits, budgets and usage (shared through Postgres)', () => {
  let api: TestApi;
  let dbA: Db;
  let dbB: Db;
  let a: GatewayPolicyService;
  let b: GatewayPolicyService;

  beforeAll(async () => {
    api = await startTestApi();
    dbA = createDb(databaseUrl(), { max: 10 });
    dbB = createDb(databaseUrl(), { max: 10 });
    a = new GatewayPolicyService(dbA);
    b = new GatewayPolicyService(dbB);
  });
  afterAll(async () => {
    await api.close();
    await dbA.destroy();
    await dbB.destroy();
  });

  /** A provider, a model priced at 10 USD per million tokens each way, and a key granting it. */
  async function setup(limits: Partial<MeteredKey>) {
    const provider = await createProvider(api);
    const project = await createProject(api);
    await createModel(api, project.id, {
      provider_id: provider.id,
      model_id: 'priced-model',
      pricing: { input_per_million_usd: 10, output_per_million_usd: 10 },
    });
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const metered: MeteredKey = { id: key.id, rate_limit: null, budget: null, ...limits };
    const request = {
      providerId: provider.id,
      providerName: provider.name,
      model: 'priced-model',
      inputTokens: 100,
      maxOutputTokens: 100,
    };
    return { key, metered, request };
  }

  it('never lets concurrent calls from two replicas overspend the budget', async () => {
    // Each call may cost up to (100 + 100) × 10 / 1e6 = 0.002 USD; the budget holds exactly 5 of them.
    const { metered, request, key } = await setup({ budget: { max_usd: 0.01, period: 'day' } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).admit(metered, request)),
    );
    const admitted = outcomes.filter((o): o is PromiseFulfilledResult<Admission> => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(admitted).toHaveLength(5);
    for (const r of refused) expect(r.reason).toBeInstanceOf(BudgetExceededError);

    // Worst case: every admitted call uses its whole allowance.
    await Promise.all(
      admitted.map(
        (o, i) =>
          (i % 2 ? a : b).settle(o.value, {
            inputTokens: 100,
            outputTokens: 100,
            status: 200,
          }).settled,
      ),
    );
    const ledger = (await dbA('gateway_budget_ledger').where({ virtual_key_id: key.id }).first()) as {
      spent_usd: string;
      reserved_usd: string;
    };
    expect(Number(ledger.spent_usd)).toBeCloseTo(0.01, 10);
    expect(Number(ledger.reserved_usd)).toBe(0);
    await expect(a.admit(metered, request)).rejects.toBeInstanceOf(BudgetExceededError);

    const usage = await api.request<{ totals: { requests: number; cost_usd: number; input_tokens: number } }>(
      'GET',
      `/api/agent-server/virtual-keys/${key.id}/usage`,
    );
    expect(usage.status).toBe(200);
    expect(usage.body.data.totals).toMatchObject({ requests: 5, input_tokens: 500 });
    expect(usage.body.data.totals.cost_usd).toBeCloseTo(0.01, 10);
  });

  it('returns unused reservations: cheap calls leave room for more', async () => {
    const { metered, request } = await setup({ budget: { max_usd: 0.004, period: 'total' } });
    // Two reservations fill the budget; settling them at a quarter of the maximum frees room for more.
    const first = await a.admit(metered, request);
    const second = await b.admit(metered, request);
    await expect(a.admit(metered, request)).rejects.toBeInstanceOf(BudgetExceededError);
    await a.settle(first, { inputTokens: 25, outputTokens: 25, status: 200 }).settled;
    await b.settle(second, { inputTokens: 25, outputTokens: 25, status: 200 }).settled;
    const third = await a.admit(metered, request);
    expect(third.reservedUsd).toBeCloseTo(0.002, 10);
  });

  it('a call right after a settle that is still being written is not refused for its reservation', async () => {
    // The gateway answers before its settle is written; the caller's next call must not pay for that.
    const { metered, request } = await setup({ budget: { max_usd: 0.004, period: 'total' } });
    const first = await a.admit(metered, request);
    const second = await a.admit(metered, request);
    const settled = [first, second].map(
      (adm) => a.settle(adm, { inputTokens: 25, outputTokens: 25, status: 200 }).settled,
    );
    const third = await a.admit(metered, request);
    expect(third.reservedUsd).toBeCloseTo(0.002, 10);
    await Promise.all(settled);
    await a.settle(third, { inputTokens: 0, outputTokens: 0, status: 500 }).settled;
  });

  it('counts requests per minute across replicas and says when to retry', async () => {
    const { metered, request } = await setup({ rate_limit: { requests_per_minute: 3 } });
    await a.admit(metered, request);
    await b.admit(metered, request);
    await a.admit(metered, request);
    const err = await b.admit(metered, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).limit).toBe('requests_per_minute');
    expect((err as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((err as RateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('limits tokens per minute once settled calls have used them', async () => {
    // A call reserves 200 tokens; settled, it counts the 160 it used, and another 200 do not fit in 250.
    const { metered, request } = await setup({ rate_limit: { tokens_per_minute: 250 } });
    const first = await a.admit(metered, request);
    await a.settle(first, { inputTokens: 100, outputTokens: 60, status: 200 }).settled;
    const err = await b.admit(metered, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).limit).toBe('tokens_per_minute');
  });

  it('refuses a budgeted call to a model whose price is unknown, and prices known models from the shipped table', async () => {
    const { metered, request } = await setup({ budget: { max_usd: 1, period: 'month' } });
    await expect(a.admit(metered, { ...request, model: 'mystery-model-7' })).rejects.toBeInstanceOf(
      UnpricedModelError,
    );
    const admitted = await a.admit(metered, { ...request, model: 'gpt-4o-mini-2024-07-18' });
    expect(admitted.price).toEqual({
      input_per_million_usd: 0.15,
      output_per_million_usd: 0.6,
      cache_read_per_million_usd: 0.075,
    });
  });

  it('validates the usage window and the key', async () => {
    const { key } = await setup({});
    expect((await api.request('GET', `/api/agent-server/virtual-keys/${randomUUID()}/usage`)).status).toBe(
      404,
    );
    const bad = await api.request(
      'GET',
      `/api/agent-server/virtual-keys/${key.id}/usage?start_time=yesterday`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields?.[0]?.field).toBe('start_time');
    const inverted = await api.request(
      'GET',
      `/api/agent-server/virtual-keys/${key.id}/usage?start_time=2026-02-01T00:00:00Z&end_time=2026-01-01T00:00:00Z`,
    );
    expect(inverted.status).toBe(400);
    const empty = await api.request<{ totals: { requests: number }; models: unknown[] }>(
      'GET',
      `/api/agent-server/virtual-keys/${key.id}/usage`,
    );
    expect(empty.body.data).toMatchObject({ totals: { requests: 0 }, models: [] });
  });
});
