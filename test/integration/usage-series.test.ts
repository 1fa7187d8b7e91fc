/**
 * Gateway usage as time series (issue #24): GET /usage and
 * GET /virtual-keys/{id}/usage/series, by the UTC hour or day, every bucket
 * present (zeros where nothing was called), grouped per key, model or
 * provider, filtered, with the key's budget. A call made through the
 * official OpenAI SDK shows up in the current bucket and in the budget;
 * calls from the past (which the gateway cannot make) are written as the
 * gateway writes its usage rows.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeteringRepository } from '../../core/repositories/metering.repository.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import {
  createProvider,
  createVirtualKey,
  VIRTUAL_KEYS,
  type ProviderData,
  type VirtualKeyData,
} from '../helpers/factories/config.js';
import { startOpenAiVendor } from '../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../fixtures/vendors/scripted-server.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Sums {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}
interface Point extends Sums {
  bucket_start: string;
  virtual_key_id?: string | null;
  virtual_key_name?: string | null;
  provider?: string;
  model?: string;
}
interface Series {
  bucket: string;
  start_time: string;
  end_time: string;
  group_by: string | null;
  buckets: Point[];
  totals: Sums;
  groups_omitted: number;
  virtual_key?: { id: string; name: string; deleted: boolean };
  budget?: {
    max_usd: number;
    period: string;
    period_start: string;
    period_end: string | null;
    spent_usd: number;
    reserved_usd: number;
    remaining_usd: number;
  } | null;
}

const zero = {
  requests: 0,
  errors: 0,
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: 0,
};
const iso = (ms: number) => new Date(ms).toISOString();

let api: TestApi;
let vendor: ScriptedVendor;
let provider: ProviderData;
let keyA: VirtualKeyData & { secret_key: string };
let keyB: VirtualKeyData & { secret_key: string };
/** Model names of this file only: the usage table is shared with every other test file. */
const m1 = `series-m1-${randomUUID().slice(0, 8)}`;
const m2 = `series-m2-${randomUUID().slice(0, 8)}`;
/** Midnight UTC ten days ago: a day in the past with known calls. */
const D = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;

const series = (path: string) => api.request<Series>('GET', `/api/agent-server${path}`);
const fields = (res: { body: { errorDetails: { fields?: Array<{ field: string }> } } }) =>
  res.body.errorDetails.fields?.map((f) => f.field);

/** A call at `at`, recorded as the gateway records one (a usage row per call); `null`: an agent's call without a key. */
async function called(
  key: { id: string } | null,
  at: number,
  row: { model: string; status?: number; input?: number; output?: number; cost?: number },
) {
  await new MeteringRepository(api.server.deps.db).insertUsage({
    virtual_key_id: key?.id ?? null,
    provider_id: provider.id,
    provider_name: provider.name,
    model: row.model,
    input_tokens: row.input ?? 0,
    output_tokens: row.output ?? 0,
    cost_usd: row.cost ?? 0,
    latency_ms: 10,
    status: row.status ?? 200,
    trace_id: null,
    created_at: new Date(at),
  });
}

beforeAll(async () => {
  api = await startTestApi();
  vendor = await startOpenAiVendor();
  provider = await createProvider(api, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
  const grants = [{ provider_id: provider.id, model_names: ['*'] }];
  keyA = await createVirtualKey(api, { providers: grants, budget: { max_usd: 5, period: 'day' } });
  keyB = await createVirtualKey(api, { providers: grants });
  await called(keyA, D + 10 * HOUR + 15 * 60_000, { model: m1, input: 100, output: 20, cost: 0.001 });
  await called(keyA, D + 10 * HOUR + 40 * 60_000, { model: m1, status: 500, input: 10 });
  await called(keyA, D + 12 * HOUR + 5 * 60_000, { model: m2, input: 50, output: 5, cost: 0.0005 });
  await called(keyB, D + 10 * HOUR + 5 * 60_000, { model: m1, input: 7, output: 3, cost: 0.0002 });
});
afterAll(async () => {
  await api?.close();
  await vendor?.close();
});

describe('usage as a time series', () => {
  it("a key's hourly series: every hour of the window, zeros where nothing was called, start rounded down", async () => {
    const res = await series(
      `/virtual-keys/${keyA.id}/usage/series?bucket=hour&start_time=${iso(D + 9.5 * HOUR)}&end_time=${iso(D + 13 * HOUR)}`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      bucket: 'hour',
      start_time: iso(D + 9 * HOUR),
      end_time: iso(D + 13 * HOUR),
      group_by: null,
      groups_omitted: 0,
      virtual_key: { id: keyA.id, name: keyA.name, deleted: false },
    });
    expect(res.body.data.buckets).toEqual([
      { bucket_start: iso(D + 9 * HOUR), ...zero },
      {
        bucket_start: iso(D + 10 * HOUR),
        requests: 2,
        errors: 1,
        input_tokens: 110,
        output_tokens: 20,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0.001,
      },
      { bucket_start: iso(D + 11 * HOUR), ...zero },
      {
        bucket_start: iso(D + 12 * HOUR),
        requests: 1,
        errors: 0,
        input_tokens: 50,
        output_tokens: 5,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0.0005,
      },
    ]);
    expect(res.body.data.totals).toEqual({
      requests: 3,
      errors: 1,
      input_tokens: 160,
      output_tokens: 25,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: 0.0015,
    });
  });

  it('one series per model (each zero-filled), the busiest first; model and provider filters', async () => {
    const window = `start_time=${iso(D + 10 * HOUR)}&end_time=${iso(D + 13 * HOUR)}`;
    const res = await series(`/virtual-keys/${keyA.id}/usage/series?bucket=hour&${window}&group_by=model`);
    expect(res.body.data.buckets.map((p) => [p.bucket_start, p.model, p.provider, p.requests])).toEqual([
      [iso(D + 10 * HOUR), m1, provider.name, 2],
      [iso(D + 10 * HOUR), m2, provider.name, 0],
      [iso(D + 11 * HOUR), m1, provider.name, 0],
      [iso(D + 11 * HOUR), m2, provider.name, 0],
      [iso(D + 12 * HOUR), m1, provider.name, 0],
      [iso(D + 12 * HOUR), m2, provider.name, 1],
    ]);
    const onlyM2 = await series(`/virtual-keys/${keyA.id}/usage/series?bucket=hour&${window}&model=${m2}`);
    expect(onlyM2.body.data.buckets.map((p) => p.requests)).toEqual([0, 0, 1]);
    expect(onlyM2.body.data.totals.requests).toBe(1);
    const elsewhere = await series(
      `/virtual-keys/${keyA.id}/usage/series?bucket=hour&${window}&provider=nope`,
    );
    expect(elsewhere.body.data.buckets).toEqual([
      { bucket_start: iso(D + 10 * HOUR), ...zero },
      { bucket_start: iso(D + 11 * HOUR), ...zero },
      { bucket_start: iso(D + 12 * HOUR), ...zero },
    ]);
  });

  it('across keys: daily buckets, one series per key with its name, or the sum of every key', async () => {
    const window = `bucket=day&start_time=${iso(D)}&end_time=${iso(D + 2 * DAY)}&model=${m1}`;
    const byKey = await series(`/usage?${window}&group_by=key`);
    expect(byKey.status).toBe(200);
    expect(byKey.body.data.buckets).toEqual([
      expect.objectContaining({
        bucket_start: iso(D),
        virtual_key_id: keyA.id,
        virtual_key_name: keyA.name,
        requests: 2,
      }),
      expect.objectContaining({
        bucket_start: iso(D),
        virtual_key_id: keyB.id,
        virtual_key_name: keyB.name,
        requests: 1,
      }),
      expect.objectContaining({ bucket_start: iso(D + DAY), virtual_key_id: keyA.id, requests: 0 }),
      expect.objectContaining({ bucket_start: iso(D + DAY), virtual_key_id: keyB.id, requests: 0 }),
    ]);
    const summed = await series(`/usage?${window}&provider=${provider.name}`);
    expect(summed.body.data.buckets).toEqual([
      {
        bucket_start: iso(D),
        requests: 3,
        errors: 1,
        input_tokens: 117,
        output_tokens: 23,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0.0012,
      },
      { bucket_start: iso(D + DAY), ...zero },
    ]);
    const oneKey = await series(`/usage?${window}&virtual_key_id=${keyB.id}`);
    expect(oneKey.body.data.totals).toEqual({
      requests: 1,
      errors: 0,
      input_tokens: 7,
      output_tokens: 3,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: 0.0002,
    });
    // Grouped, a window without calls has no series; ungrouped, it is all zeros.
    const quiet = `bucket=day&start_time=${iso(D - 5 * DAY)}&end_time=${iso(D - 3 * DAY)}&model=${m1}`;
    expect((await series(`/usage?${quiet}&group_by=key`)).body.data.buckets).toEqual([]);
    expect((await series(`/usage?${quiet}`)).body.data.buckets.map((p) => p.requests)).toEqual([0, 0]);
  });

  it('calls made under no key (agent turns of projects without one) are a group of their own, left out by a key filter', async () => {
    const m3 = `series-m3-${randomUUID().slice(0, 8)}`;
    await called(null, D + HOUR, { model: m3, input: 10, output: 2, cost: 0.0003 });
    await called(null, D + 2 * HOUR, { model: m3, input: 5, output: 1, cost: 0.0001 });
    await called(keyB, D + HOUR, { model: m3, input: 1, cost: 0.00001 });
    const window = `bucket=day&start_time=${iso(D)}&end_time=${iso(D + 2 * DAY)}&model=${m3}`;
    const byKey = await series(`/usage?${window}&group_by=key`);
    expect(byKey.status).toBe(200);
    expect(byKey.body.data.buckets).toEqual([
      {
        bucket_start: iso(D),
        virtual_key_id: null,
        virtual_key_name: null,
        ...zero,
        requests: 2,
        input_tokens: 15,
        output_tokens: 3,
        cost_usd: 0.0004,
      },
      expect.objectContaining({ bucket_start: iso(D), virtual_key_id: keyB.id, requests: 1 }),
      { bucket_start: iso(D + DAY), virtual_key_id: null, virtual_key_name: null, ...zero },
      expect.objectContaining({ bucket_start: iso(D + DAY), virtual_key_id: keyB.id, requests: 0 }),
    ]);
    expect(byKey.body.data.totals).toMatchObject({ requests: 3, cost_usd: 0.00041 });
    const oneKey = await series(`/usage?${window}&virtual_key_id=${keyB.id}`);
    expect(oneKey.body.data.totals).toMatchObject({ requests: 1, cost_usd: 0.00001 });
  });

  it("by default the last 30 days; a call just made through the OpenAI SDK is in today's bucket and in the key's budget", async () => {
    const client = new OpenAI({
      baseURL: `${api.url}/api/gateway/openai/v1`,
      apiKey: keyA.secret_key,
      maxRetries: 0,
    });
    vendor.script({ reply: { text: 'counted', usage: { input: 11, output: 5 } } });
    const answer = await client.chat.completions.create({
      model: `${provider.name}/gpt-4o-mini`,
      messages: [{ role: 'user', content: 'count me' }],
    });
    expect(answer.choices[0]!.message.content).toBe('counted');

    const today = Math.floor(Date.now() / DAY) * DAY;
    const res = await series(`/virtual-keys/${keyA.id}/usage/series?bucket=day`);
    const { buckets } = res.body.data;
    expect(buckets).toHaveLength(30);
    expect(buckets[0]!.bucket_start).toBe(iso(today - 29 * DAY));
    // gpt-4o-mini's list price: 11 × 0.15 + 5 × 0.6 USD per million tokens.
    expect(buckets.at(-1)).toEqual({
      bucket_start: iso(today),
      requests: 1,
      errors: 0,
      input_tokens: 11,
      output_tokens: 5,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: 0.00000465,
    });
    expect(buckets.find((p) => p.bucket_start === iso(D))?.requests).toBe(3);
    // The budget as the gateway counts it (its counters are written just after the answer).
    await expect
      .poll(async () => (await series(`/virtual-keys/${keyA.id}/usage/series?bucket=day`)).body.data.budget, {
        timeout: 5_000,
      })
      .toEqual({
        max_usd: 5,
        period: 'day',
        period_start: iso(today),
        period_end: iso(today + DAY),
        spent_usd: 0.00000465,
        reserved_usd: 0,
        remaining_usd: 4.99999535,
      });
    // The default hourly window: the last 24 hours, the current one included.
    const hourly = await series(`/usage?virtual_key_id=${keyA.id}`);
    expect(hourly.body.data.bucket).toBe('hour');
    expect(hourly.body.data.buckets).toHaveLength(24);
    expect(hourly.body.data.buckets.at(-1)!.requests).toBe(1);
    expect((await series(`/virtual-keys/${keyB.id}/usage/series`)).body.data.budget).toBeNull();
  });

  it('answers 400 naming the field for a bad bucket, window, group or id, and 404 for an unknown key', async () => {
    const cases: Array<[string, string]> = [
      ['/usage?bucket=minute', 'bucket'],
      [`/usage?start_time=${iso(D + DAY)}&end_time=${iso(D)}`, 'start_time'],
      [`/usage?bucket=hour&start_time=${iso(D - 40 * DAY)}&end_time=${iso(D)}`, 'start_time'],
      [`/usage?bucket=day&start_time=${iso(D - 800 * DAY)}&end_time=${iso(D)}`, 'start_time'],
      ['/usage?start_time=yesterday', 'start_time'],
      ['/usage?group_by=agent', 'group_by'],
      ['/usage?virtual_key_id=nope', 'virtual_key_id'],
      [`/virtual-keys/${keyA.id}/usage/series?group_by=key`, 'group_by'],
      ['/usage?project_id=00000000-0000-4000-8000-000000000000', 'project_id'],
    ];
    for (const [path, field] of cases) {
      const res = await series(path);
      expect(res.status, path).toBe(400);
      expect(fields(res), path).toEqual([field]);
    }
    const tooMany = await series(`/usage?bucket=hour&start_time=${iso(D - 40 * DAY)}&end_time=${iso(D)}`);
    expect(tooMany.body.errorDetails.fields![0]!.message).toContain('744');
    expect((await series(`/virtual-keys/${randomUUID()}/usage/series`)).status).toBe(404);
  });

  it("a deleted key's series stays readable", async () => {
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    await called(key, D + HOUR, { model: m1 });
    expect((await api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    const res = await series(
      `/virtual-keys/${key.id}/usage/series?bucket=day&start_time=${iso(D)}&end_time=${iso(D + DAY)}`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data.virtual_key).toEqual({ id: key.id, name: key.name, deleted: true });
    expect(res.body.data.buckets).toEqual([expect.objectContaining({ bucket_start: iso(D), requests: 1 })]);
  });
});
