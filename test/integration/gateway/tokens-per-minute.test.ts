/**
 * A key's tokens_per_minute through the real gateway (two API processes on
 * one database, leases on, as in production): a call reserves its
 * estimated input + max_tokens from admission until it settles, so calls
 * in flight together can never pass the limit, on one replica or across
 * both; a call larger than the whole limit is refused at once. The scripted
 * vendor answers after a second and bills output tokens = max_tokens.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { postConfig, gatewayReplicaEnv, spawnApi, type ApiProcess } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

const TPM = 1_000;
const MAX_TOKENS = 300;
const body = (maxTokens: number) => ({
  model: 'vendor/some-model',
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: maxTokens,
});
/** The gateway's input estimate (about four characters per token of the body, core/metering/model-call.ts). */
const INPUT_ESTIMATE = Math.ceil(JSON.stringify(body(MAX_TOKENS)).length / 4);
/** What each call reserves, and how many of them fit in the limit at once. */
const RESERVED = INPUT_ESTIMATE + MAX_TOKENS;
const FIT = Math.floor(TPM / RESERVED);

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let db: Db;
let vendor: ScriptedVendor;
let apis: [ApiProcess, ApiProcess];
let providerId = '';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Not in a minute's last 15 s: a test's calls all count in one window. */
async function awayFromMinuteEnd(): Promise<void> {
  const s = new Date().getSeconds();
  if (s >= 45) await sleep((61 - s) * 1000);
}

async function keyWithTpm(): Promise<{ id: string; secret: string }> {
  const key = await postConfig(apis[0].url, '/virtual-keys', {
    name: `k-${randomBytes(4).toString('hex')}`,
    providers: [{ provider_id: providerId, model_names: ['*'] }],
    rate_limit: { tokens_per_minute: TPM },
  });
  return { id: key.id!, secret: key.secret_key! };
}

/** Every admitted call answered after a second, billed its whole max_tokens. */
function scriptSlowFullAnswers(n: number): void {
  for (let i = 0; i < n; i++)
    vendor.script({
      firstByteDelayMs: 1_000,
      reply: { text: 'ok', usage: { input: 11, output: MAX_TOKENS } },
    });
}

async function chat(api: ApiProcess, secret: string, maxTokens: number) {
  const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify(body(maxTokens)),
  });
  const json = (await res.json()) as { error?: { code?: string; type?: string; message?: string } };
  return {
    status: res.status,
    code: json.error?.code,
    message: json.error?.message ?? '',
    retryAfter: res.headers.get('retry-after'),
  };
}

const windowTokens = async (keyId: string) =>
  ((await db('gateway_rate_windows').where({ virtual_key_id: keyId })) as Array<{ tokens: number }>).map(
    (w) => Number(w.tokens),
  );

beforeAll(async () => {
  scratch = await createScratchDatabase('tpm');
  db = createDb(scratch.url, { max: 4 });
  await migrateLatest(db);
  vendor = await startOpenAiVendor();
  const env = gatewayReplicaEnv(scratch.url);
  apis = [await spawnApi(env), await spawnApi(env)];
  const provider = await postConfig(apis[0].url, '/providers', {
    name: 'vendor',
    provider_type: 'openai',
    base_url: `${vendor.url}/v1`,
    api_key: 'sk-vendor',
  });
  providerId = provider.id!;
}, 120_000);

afterAll(async () => {
  for (const a of apis ?? []) a.child.kill('SIGKILL');
  await db?.destroy();
  await vendor?.close();
  await scratch?.drop();
});

beforeEach(() => vendor.reset());

describe('tokens_per_minute counts the reservations of calls in flight', () => {
  it('of 40 concurrent calls through the OpenAI SDK, admits only as many as their reservations fit', async () => {
    await awayFromMinuteEnd();
    const key = await keyWithTpm();
    scriptSlowFullAnswers(40);
    const client = new OpenAI({
      baseURL: `${apis[0].url}/api/gateway/openai/v1`,
      apiKey: key.secret,
      maxRetries: 0,
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, () => client.chat.completions.create(body(MAX_TOKENS) as never)),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(FIT).toBe(3);
    expect(ok).toBe(FIT);
    expect(vendor.received).toHaveLength(FIT);
    for (const o of outcomes) {
      if (o.status === 'fulfilled') continue;
      const err = o.reason as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.status).toBe(429);
      expect(err.code).toBe('rate_limit_exceeded');
      expect(err.message).toContain('tokens_per_minute of 1,000');
      expect(Number(err.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Settled, the window holds what the calls used (11 + 300 each): still no room for another.
    const next = await chat(apis[0], key.secret, MAX_TOKENS);
    expect(next.status).toBe(429);
    expect(next.message).toContain('tokens_per_minute');
    for (const t of await windowTokens(key.id)) expect(t).toBeLessThanOrEqual(TPM);
  }, 60_000);

  it('refuses at once, without Retry-After, a call whose own reservation is larger than the limit', async () => {
    const key = await keyWithTpm();
    const started = performance.now();
    const r = await chat(apis[1], key.secret, 5_000);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(r.status).toBe(429);
    expect(r.code).toBe('rate_limit_exceeded');
    expect(r.message).toContain(`reserves ${(INPUT_ESTIMATE + 5_000).toLocaleString('en-US')} tokens`);
    expect(r.message).toContain("the key's tokens_per_minute of 1,000");
    expect(r.message).toContain('lower max_tokens');
    expect(r.retryAfter).toBeNull();
    expect(vendor.received).toHaveLength(0);
    // Nothing was counted for it: a call that fits is admitted at once.
    expect(await windowTokens(key.id)).toEqual([]);
    expect((await chat(apis[1], key.secret, MAX_TOKENS)).status).toBe(200);
  }, 60_000);

  it('across two replicas, the tokens of calls in flight never pass the limit', async () => {
    await awayFromMinuteEnd();
    const key = await keyWithTpm();
    scriptSlowFullAnswers(40);
    // What PostgreSQL holds of the window (leases of both replicas), watched throughout.
    let highest = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const t of await windowTokens(key.id)) highest = Math.max(highest, t);
        await sleep(20);
      }
    })();
    // Every admitted call waits a second at the vendor: they are all in flight together.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => chat(apis[i % 2]!, key.secret, MAX_TOKENS)),
    );
    watching = false;
    await watcher;
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(FIT);
    expect(ok.length * RESERVED).toBeLessThanOrEqual(TPM);
    expect(vendor.received.length).toBe(ok.length);
    expect(highest).toBeLessThanOrEqual(TPM);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.code).toBe('rate_limit_exceeded');
      expect(r.message).toContain('tokens_per_minute of 1,000');
    }
  }, 60_000);
});
