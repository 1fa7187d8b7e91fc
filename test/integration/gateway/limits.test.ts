/**
 * Rate limits, budgets and the usage log, end to end through the gateway's
 * real surfaces and the scripted vendors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProject } from '../../helpers/factories.js';
import { createModel, createVirtualKey, VIRTUAL_KEYS } from '../../helpers/factories/config.js';
import { FORMATS, startHarness, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // Price the scripted model: 10 USD per million tokens each way.
  const project = await createProject(h.api);
  for (const f of FORMATS) {
    await createModel(h.api, project.id, {
      provider_type: f,
      provider_id: h.providers[f].id,
      model_id: 'm',
      pricing: { input_per_million_usd: 10, output_per_million_usd: 10 },
    });
  }
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const grantAll = () => FORMATS.map((f) => ({ provider_id: h.providers[f].id, model_names: ['*'] }));

describe.each(FORMATS)('%s surface', (surface) => {
  const model = () => `${h.providers[surface].name}/m`;

  it('answers 429 with Retry-After once the requests per minute are used, without calling the vendor', async () => {
    const key = await createVirtualKey(h.api, {
      providers: grantAll(),
      rate_limit: { requests_per_minute: 2 },
    });
    for (let i = 0; i < 2; i++)
      expect((await chatRequest(h.api, surface, model(), { secret: key.secret_key })).status).toBe(200);
    const limited = await chatRequest(h.api, surface, model(), { secret: key.secret_key });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(JSON.stringify(await limited.json())).toMatch(/rate limit/i);
    expect(h.vendors[surface].received).toHaveLength(2);
  });

  it('stops at the budget with 429 and records usage, cost and trace ids per request', async () => {
    // The scripted vendor reports 11 input + 5 output tokens; each call reserves
    // (estimated input + max_tokens 100) at 10 USD/M, so a 0.0025 USD budget admits one call at a time.
    const key = await createVirtualKey(h.api, {
      providers: grantAll(),
      budget: { max_usd: 0.0025, period: 'day' },
    });
    const extra = surface === 'gemini' ? { generationConfig: { maxOutputTokens: 100 } } : { max_tokens: 100 };
    let ok = 0;
    let refused: Response | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await chatRequest(h.api, surface, model(), { secret: key.secret_key, extra });
      if (res.status === 200) ok++;
      else refused = res;
    }
    expect(ok).toBeGreaterThan(0);
    expect(refused?.status).toBe(429);
    const body = JSON.stringify(await refused!.json());
    if (surface === 'openai') expect(body).toContain('insufficient_quota');
    expect(body).toMatch(/budget/i);

    const usage = await h.api.request<{
      totals: { requests: number; input_tokens: number; output_tokens: number; cost_usd: number };
      models: Array<{ provider: string; model: string; requests: number }>;
    }>('GET', `${VIRTUAL_KEYS}/${key.id}/usage`);
    expect(usage.body.data.totals).toMatchObject({
      requests: ok,
      input_tokens: 11 * ok,
      output_tokens: 5 * ok,
    });
    expect(usage.body.data.totals.cost_usd).toBeCloseTo((16 * ok * 10) / 1e6, 10);
    expect(usage.body.data.totals.cost_usd).toBeLessThanOrEqual(0.0025);
    expect(usage.body.data.models).toEqual([
      expect.objectContaining({ provider: h.providers[surface].name, model: 'm', requests: ok }),
    ]);
  });
});
