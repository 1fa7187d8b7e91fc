/**
 * Leased limits across two real API processes (core/metering/leases.ts):
 * each replica admits calls against a slice of the key's budget and rate
 * limit that PostgreSQL counted before it was spent. Concurrent calls
 * through both never overspend the budget nor exceed the limit, and a
 * killed replica's unspent lease comes back once its TTL has passed.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { postConfig, gatewayReplicaEnv, spawnApi, type ApiProcess } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

const TTL_MS = 3_000;
/** 10 USD per million tokens each way: a call's worst case is (estimated input + max_tokens) × 1e-5. */
const PRICE = { input_per_million_usd: 10, output_per_million_usd: 10 };

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let db: Db;
let vendor: ScriptedVendor;
let apis: ApiProcess[] = [];
let providerId = '';
let env: Record<string, string>;

const post = (api: ApiProcess, p: string, body: unknown) => postConfig(api.url, p, body);

async function keyWith(limits: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const live = apis.find((a) => a.child.exitCode === null && a.child.signalCode === null)!;
  const key = await post(live, '/virtual-keys', {
    name: `k-${randomBytes(4).toString('hex')}`,
    providers: [{ provider_id: providerId, model_names: ['*'] }],
    ...limits,
  });
  return { id: key.id!, secret: key.secret_key! };
}

/** One chat call through `api`: its status and error code. */
async function chat(api: ApiProcess, secret: string, maxTokens: number) {
  const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({
      model: 'vendor/priced-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: maxTokens,
    }),
  });
  const body = (await res.json()) as { error?: { code?: string; type?: string } };
  return {
    status: res.status,
    code: body.error?.code ?? body.error?.type,
    retryAfter: res.headers.get('retry-after'),
  };
}

const ledger = async (keyId: string) => {
  const row = (await db('gateway_budget_ledger').where({ virtual_key_id: keyId }).first()) as
    { spent_usd: string; reserved_usd: string } | undefined;
  return { spent: Number(row?.spent_usd ?? 0), reserved: Number(row?.reserved_usd ?? 0) };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What the key's usage rows charge, once every row is final: an answer waits
 * for its provisional row (charged at the call's worst case), whose completion
 * with the actual cost is written just after.
 */
const spentInUsageLog = async (keyId: string) => {
  const deadline = Date.now() + 10_000;
  while (
    (await db('gateway_usage').where({ virtual_key_id: keyId, provisional: true }).first('id')) !== undefined
  ) {
    if (Date.now() > deadline) throw new Error('usage rows stayed provisional');
    await sleep(50);
  }
  return Number(
    (
      (await db('gateway_usage').where({ virtual_key_id: keyId }).sum({ s: 'cost_usd' }).first()) as {
        s: string;
      }
    ).s ?? 0,
  );
};

beforeAll(async () => {
  scratch = await createScratchDatabase('leases');
  db = createDb(scratch.url, { max: 4 });
  await migrateLatest(db);
  vendor = await startOpenAiVendor();
  env = gatewayReplicaEnv(scratch.url, TTL_MS);
  apis = await Promise.all([spawnApi(env), spawnApi(env)]);
  const provider = await post(apis[0]!, '/providers', {
    name: 'vendor',
    provider_type: 'openai',
    base_url: `${vendor.url}/v1`,
    api_key: 'sk-vendor',
  });
  providerId = provider.id!;
  const project = await post(apis[0]!, '/projects', { name: 'leases' });
  await post(apis[0]!, `/models?project_id=${project.id}`, {
    name: 'priced',
    model_id: 'priced-model',
    provider_type: 'openai',
    provider_id: providerId,
    pricing: PRICE,
  });
}, 120_000);

afterAll(async () => {
  for (const a of apis) a.child.kill('SIGKILL');
  await db?.destroy();
  await vendor?.close();
  await scratch?.drop();
});

describe('leased limits across two API processes', () => {
  it('concurrent calls through both never overspend the budget; given back, the ledger matches the usage log', async () => {
    const maxUsd = 0.02;
    const key = await keyWith({ budget: { max_usd: maxUsd, period: 'day' } });
    const statuses: Array<{ status: number; code?: string }> = [];
    // What PostgreSQL holds (spent + every lease and reservation) never passes the budget, watched throughout.
    let highest = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const l = await ledger(key.id);
        highest = Math.max(highest, l.spent + l.reserved);
        await sleep(20);
      }
    })();
    // 16 clients, 8 per process, until each has been refused for the budget.
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        for (;;) {
          const r = await chat(apis[i % 2]!, key.secret, 16);
          statuses.push(r);
          if (r.status === 429) break;
          if (r.status !== 200) throw new Error(`unexpected ${r.status} ${r.code}`);
        }
      }),
    );
    watching = false;
    await watcher;
    expect(highest).toBeGreaterThan(maxUsd / 2);
    expect(highest).toBeLessThanOrEqual(maxUsd + 1e-9);
    const ok = statuses.filter((s) => s.status === 200).length;
    expect(statuses.filter((s) => s.status === 429).every((s) => s.code === 'insufficient_quota')).toBe(true);
    // Each call costs 16 tokens (11 in, 5 out) × 1e-5 = 0.00016 USD.
    expect(ok).toBeGreaterThan(40);
    const spent = await spentInUsageLog(key.id);
    expect(spent).toBeCloseTo(ok * 0.00016, 8);
    expect(spent).toBeLessThanOrEqual(maxUsd);

    // Every lease ends within its spend time (GATEWAY_LEASE_MS) plus a tick and is given back.
    const deadline = Date.now() + TTL_MS * 2;
    while ((await db('gateway_budget_leases').where({ virtual_key_id: key.id })).length > 0) {
      if (Date.now() > deadline) throw new Error('leases were not given back');
      await sleep(200);
    }
    const l = await ledger(key.id);
    expect(l.reserved).toBeCloseTo(0, 8);
    expect(l.spent).toBeCloseTo(spent, 8);
  }, 60_000);

  it('never admits more calls in a minute than the rate limit, whichever replica they reach', async () => {
    const rpm = 40;
    const key = await keyWith({ rate_limit: { requests_per_minute: rpm } });
    const started = Date.now();
    const statuses: Array<{ status: number; code?: string; retryAfter: string | null }> = [];
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        while (Date.now() - started < 3_000) statuses.push(await chat(apis[i % 2]!, key.secret, 16));
      }),
    );
    const windows = (await db('gateway_rate_windows').where({ virtual_key_id: key.id })) as Array<{
      requests: number;
    }>;
    const ok = statuses.filter((s) => s.status === 200).length;
    for (const w of windows) expect(w.requests).toBeLessThanOrEqual(rpm);
    expect(ok).toBeLessThanOrEqual(rpm * windows.length);
    expect(ok).toBeGreaterThanOrEqual(rpm);
    const refused = statuses.filter((s) => s.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.code).toBe('rate_limit_exceeded');
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);

  it("a killed replica's unspent lease comes back within the lease TTL", async () => {
    // A call may cost up to about (4 + 1000) × 1e-5 ≈ 0.01 USD; the budget holds three such reservations.
    const key = await keyWith({ budget: { max_usd: 0.03, period: 'day' } });
    const [a, b] = apis as [ApiProcess, ApiProcess];
    expect((await chat(a, key.secret, 1_000)).status).toBe(200);
    // Its usage row completed (the actual cost, not the worst case the lease's return would charge).
    while ((await db('gateway_usage').where({ virtual_key_id: key.id, provisional: false })).length === 0)
      await sleep(20);
    // `a` holds a lease with about 0.01 USD unspent; it dies holding it.
    expect(await db('gateway_budget_leases').where({ virtual_key_id: key.id })).toHaveLength(1);
    a.child.kill('SIGKILL');
    const killedAt = Date.now();

    /** Two concurrent calls through `b`, each answered after 0.6 s: how many were admitted. */
    const pair = async () => {
      vendor.script({ firstByteDelayMs: 600 }, { firstByteDelayMs: 600 });
      const rs = await Promise.all([chat(b, key.secret, 1_000), chat(b, key.secret, 1_000)]);
      for (const r of rs) if (r.status !== 200) expect(r.code).toBe('insufficient_quota');
      return rs.filter((r) => r.status === 200).length;
    };
    // While the dead replica's lease holds its slice, only one of the two fits.
    expect(await pair()).toBe(1);
    // Each try is admitted at its start and takes 0.6 s: the lease was back when the first full pair began.
    let backAfter: number;
    for (;;) {
      await sleep(250);
      backAfter = Date.now() - killedAt;
      if (backAfter > TTL_MS + 4_000) throw new Error('the lease did not come back');
      if ((await pair()) === 2) break;
    }
    console.log(`killed replica's lease back within ${backAfter} ms (TTL ${TTL_MS} ms)`);
    expect(backAfter).toBeGreaterThanOrEqual(TTL_MS - 1_000);
    vendor.reset();
  }, 60_000);

  it('a replica stopped gracefully gives its lease back as it stops', async () => {
    const key = await keyWith({ budget: { max_usd: 1, period: 'day' } });
    // Leases spent for a minute: only the shutdown can be what gives this one back.
    const c = await spawnApi({ ...env, GATEWAY_LEASE_MS: '60000' });
    apis.push(c);
    expect((await chat(c, key.secret, 16)).status).toBe(200);
    expect(await db('gateway_budget_leases').where({ virtual_key_id: key.id })).toHaveLength(1);
    expect((await ledger(key.id)).reserved).toBeGreaterThan(0);
    await c.stop();
    expect(await db('gateway_budget_leases').where({ virtual_key_id: key.id })).toHaveLength(0);
    const l = await ledger(key.id);
    expect(l.reserved).toBeCloseTo(0, 8);
    expect(l.spent).toBeCloseTo(0.00016, 8);
  }, 60_000);
});
