/**
 * A budget is never overspent by what a call may make the vendor write,
 * through two real API processes with concurrent calls: every choice (`n`,
 * `candidateCount`) is reserved, and a call that sets no output limit is
 * reserved at the model's own ceiling (the shipped table, or the Model
 * resource's `max_output_tokens`; unknown on a budgeted key: a 400 naming
 * that setting). The scripted vendors bill like a model that writes all it
 * may: output = choices × the limit, or × the model's ceiling.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { startGeminiVendor } from '../../fixtures/vendors/gemini.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import { billsAsWritten, type ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { postConfig, gatewayReplicaEnv, spawnApi, type ApiProcess } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

/** gpt-4o-mini's shipped output ceiling and output price (USD per token). */
const MINI_CEILING = 16_384;
const MINI_OUT = 0.6e-6;

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let db: Db;
let openai: ScriptedVendor;
let gemini: ScriptedVendor;
let apis: ApiProcess[] = [];
const providers = { openai: '', gemini: '' };
let projectId = '';

const post = (p: string, body: unknown) => postConfig(apis[0]!.url, p, body);

async function budgetKey(maxUsd: number, models = ['*']): Promise<{ id: string; secret: string }> {
  const key = await post('/virtual-keys', {
    name: `k-${randomBytes(4).toString('hex')}`,
    providers: [
      { provider_id: providers.openai, model_names: models },
      { provider_id: providers.gemini, model_names: models },
    ],
    budget: { max_usd: maxUsd, period: 'day' },
  });
  return { id: key.id!, secret: key.secret_key! };
}

async function chat(api: ApiProcess, secret: string, model: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({
      model: `openai-vendor/${model}`,
      messages: [{ role: 'user', content: 'hi' }],
      ...extra,
    }),
  });
  const body = (await res.json()) as { error?: { code?: string; message?: string; param?: string } };
  return { status: res.status, error: body.error };
}

/** What the usage log says the key spent (every call's row, provisional ones at their worst case). */
async function spent(keyId: string): Promise<number> {
  const row = (await db('gateway_usage').where({ virtual_key_id: keyId }).sum({ s: 'cost_usd' }).first()) as {
    s: string | null;
  };
  return Number(row.s ?? 0);
}

/** `n` calls at once, alternating between the two API processes. */
const concurrently = <T>(n: number, call: (api: ApiProcess) => Promise<T>) =>
  Promise.all(Array.from({ length: n }, (_, i) => call(apis[i % 2]!)));

beforeAll(async () => {
  scratch = await createScratchDatabase('reservations');
  db = createDb(scratch.url, { max: 4 });
  await migrateLatest(db);
  openai = await startOpenAiVendor();
  gemini = await startGeminiVendor();
  // Each model writes up to its own ceiling.
  const ceilings: Record<string, number> = { 'sized-small': 500, 'sized-large': 2_000 };
  openai.billing = (body) => billsAsWritten(ceilings[String(body.model)] ?? MINI_CEILING)(body);
  gemini.billing = billsAsWritten(8_192);
  const env = gatewayReplicaEnv(scratch.url);
  apis = await Promise.all([spawnApi(env), spawnApi(env)]);
  providers.openai = (
    await post('/providers', {
      name: 'openai-vendor',
      provider_type: 'openai',
      base_url: `${openai.url}/v1`,
      api_key: 'sk-vendor',
    })
  ).id!;
  providers.gemini = (
    await post('/providers', {
      name: 'gemini-vendor',
      provider_type: 'gemini',
      base_url: gemini.url,
      api_key: 'g-vendor',
    })
  ).id!;
  projectId = (await post('/projects', { name: 'reservations' })).id!;
  // Models the shipped tables do not know: priced here, one with its output ceiling set.
  const model = (model_id: string, extra: Record<string, unknown>) =>
    post(`/models?project_id=${projectId}`, {
      name: model_id,
      model_id,
      provider_type: 'openai',
      provider_id: providers.openai,
      pricing: { input_per_million_usd: 10, output_per_million_usd: 10 },
      ...extra,
    });
  await model('custom-model', {});
  await model('sized-small', { max_output_tokens: 500 });
  await model('sized-large', { max_output_tokens: 2_000 });
}, 120_000);

afterAll(async () => {
  for (const a of apis) a.child.kill('SIGKILL');
  await db?.destroy();
  await openai?.close();
  await gemini?.close();
  await scratch?.drop();
});

describe('every choice is reserved', () => {
  it('one call asking for 64 choices of 4,096 tokens is refused by a 0.01 USD budget', async () => {
    const key = await budgetKey(0.01);
    const r = await chat(apis[0]!, key.secret, 'gpt-4o-mini', { max_tokens: 4_096, n: 64 });
    expect(r.status).toBe(429);
    expect(r.error?.code).toBe('insufficient_quota');
    expect(await spent(key.id)).toBe(0);
  });

  it('20 concurrent calls of n=8 through two replicas never spend more than the budget', async () => {
    const budget = 0.01;
    const key = await budgetKey(budget);
    // Each call is billed 8 × 400 output tokens: 0.00192 USD, so about five fit.
    const results = await concurrently(20, (api) =>
      chat(api, key.secret, 'gpt-4o-mini', { max_tokens: 400, n: 8 }),
    );
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(results.every((r) => r.status === 200 || r.error?.code === 'insufficient_quota')).toBe(true);
    expect(ok * 8 * 400 * MINI_OUT).toBeLessThanOrEqual(budget);
    expect(await spent(key.id)).toBeLessThanOrEqual(budget);
  }, 60_000);

  it("Gemini's candidateCount is reserved like n", async () => {
    const key = await budgetKey(0.01);
    // gemini-2.0-flash writes at 0.4 USD per million: 8 × 4,096 tokens is 0.0131 USD.
    const res = await fetch(
      `${apis[1]!.url}/api/gateway/gemini/v1beta/models/gemini-vendor/gemini-2.0-flash:generateContent`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key.secret },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
          generationConfig: { maxOutputTokens: 4_096, candidateCount: 8 },
        }),
      },
    );
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe('RESOURCE_EXHAUSTED');
    expect(gemini.received).toHaveLength(0);
  });
});

describe('a call without an output limit', () => {
  it("is reserved at the model's ceiling: 10 concurrent calls never overspend", async () => {
    const budget = 0.01;
    const key = await budgetKey(budget);
    // Each call is billed gpt-4o-mini's 16,384 output tokens: 0.0098 USD, so one fits.
    const results = await concurrently(10, (api) => chat(api, key.secret, 'gpt-4o-mini'));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(1);
    expect(await spent(key.id)).toBeLessThanOrEqual(budget);
    expect(await spent(key.id)).toBeGreaterThan(MINI_CEILING * MINI_OUT);
  }, 60_000);

  it('on a model with no known ceiling is a 400 naming max_output_tokens, after the grant check', async () => {
    const key = await budgetKey(1, ['custom-model', 'sized-small', 'sized-large']);
    const ungranted = await chat(apis[0]!, key.secret, 'gpt-4o-mini');
    expect(ungranted.status).toBe(403);
    expect(ungranted.error?.message).toMatch(/not granted/);
    const unknown = await chat(apis[0]!, key.secret, 'custom-model');
    expect(unknown.status).toBe(400);
    expect(unknown.error?.param).toBe('max_tokens');
    expect(unknown.error?.message).toContain('max_output_tokens');
    // With a limit of its own, the call is bounded and goes through.
    expect((await chat(apis[1]!, key.secret, 'custom-model', { max_tokens: 100 })).status).toBe(200);
  });

  it("is reserved at the Model resource's max_output_tokens", async () => {
    // 10 USD per million: 500 tokens reserve 0.005 USD, 2,000 reserve 0.02.
    const key = await budgetKey(0.01, ['sized-small', 'sized-large']);
    expect((await chat(apis[0]!, key.secret, 'sized-small')).status).toBe(200);
    const large = await chat(apis[1]!, key.secret, 'sized-large');
    expect(large.status).toBe(429);
    expect(large.error?.code).toBe('insufficient_quota');
  });
});
