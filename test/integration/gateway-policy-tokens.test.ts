/**
 * tokens_per_minute counts the reservations of calls in flight: a call holds
 * its estimated input + output allowance in the key's minute window from
 * admission until it settles, when the tokens it used replace them. Two
 * services with their own pools stand for two replicas; without leases is
 * how agent sessions admit (one statement per call), with leases how the
 * gateway does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { RateLimitedError } from '../../core/metering/errors.js';
import { GatewayPolicyService } from '../../core/metering/gateway-policy.js';
import type { Admission, MeteredKey } from '../../core/metering/types.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProvider, createVirtualKey } from '../helpers/factories/config.js';
import { databaseUrl } from '../helpers/services.js';

const TPM = 1_000;
/** Each call reserves 100 estimated input + 300 output tokens: 2 fit in 1,000. */
const INPUT = 100;
const MAX_OUTPUT = 300;
const RESERVED = INPUT + MAX_OUTPUT;
const FIT = Math.floor(TPM / RESERVED);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Not in a minute's last 15 s: a test's calls all count in one window. */
async function awayFromMinuteEnd(): Promise<void> {
  const s = new Date().getSeconds();
  if (s >= 45) await sleep((61 - s) * 1000);
}

let api: TestApi;
let dbA: Db;
let dbB: Db;

beforeAll(async () => {
  api = await startTestApi();
  dbA = createDb(databaseUrl(), { max: 10 });
  dbB = createDb(databaseUrl(), { max: 10 });
});
afterAll(async () => {
  await api.close();
  await dbA.destroy();
  await dbB.destroy();
});

async function setup() {
  const provider = await createProvider(api);
  const key = await createVirtualKey(api, {
    providers: [{ provider_id: provider.id, model_names: ['*'] }],
  });
  const metered: MeteredKey = { id: key.id, rate_limit: { tokens_per_minute: TPM }, budget: null };
  const request = {
    providerId: provider.id,
    providerName: provider.name,
    model: 'some-model',
    inputTokens: INPUT,
    maxOutputTokens: MAX_OUTPUT,
  };
  return { metered, request };
}

/** The key's minute windows as PostgreSQL holds them. */
const windows = async (keyId: string) =>
  (
    (await dbA('gateway_rate_windows').where({ virtual_key_id: keyId })) as Array<{
      requests: number;
      tokens: number;
    }>
  ).map((w) => ({ requests: w.requests, tokens: Number(w.tokens) }));

/** `n` concurrent admissions alternating between the two services. */
async function admitConcurrently(
  services: [GatewayPolicyService, GatewayPolicyService],
  metered: MeteredKey,
  request: Awaited<ReturnType<typeof setup>>['request'],
  n: number,
) {
  const outcomes = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => services[i % 2]!.admit(metered, request).then((adm) => ({ adm, i }))),
  );
  const admitted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
  return { admitted, refused };
}

function expectTokensRefusal(err: unknown): void {
  expect(err).toBeInstanceOf(RateLimitedError);
  const e = err as RateLimitedError;
  expect(e.limit).toBe('tokens_per_minute');
  expect(e.retryable).toBe(true);
  expect(e.message).toContain('tokens_per_minute of 1,000');
  expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(e.retryAfterSeconds).toBeLessThanOrEqual(60);
}

async function expectCallOverLimit(service: GatewayPolicyService, metered: MeteredKey, request: object) {
  const started = performance.now();
  const err = await service
    .admit(metered, { ...(request as Awaited<ReturnType<typeof setup>>['request']), maxOutputTokens: 5_000 })
    .catch((e: unknown) => e);
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(err).toBeInstanceOf(RateLimitedError);
  const e = err as RateLimitedError;
  expect(e.limit).toBe('tokens_per_minute');
  // Waiting cannot help: no Retry-After.
  expect(e.retryable).toBe(false);
  expect(e.message).toContain('5,100 tokens');
  expect(e.message).toContain("the key's tokens_per_minute of 1,000");
  expect(e.message).toMatch(/lower max_tokens/);
}

describe('tokens_per_minute without leases (agent sessions: one statement per call)', () => {
  let a: GatewayPolicyService;
  let b: GatewayPolicyService;
  beforeAll(() => {
    a = new GatewayPolicyService(dbA);
    b = new GatewayPolicyService(dbB);
  });

  it('counts the reservations of concurrent calls, and settling gives back what they did not use', async () => {
    await awayFromMinuteEnd();
    const { metered, request } = await setup();
    const { admitted, refused } = await admitConcurrently([a, b], metered, request, 40);
    expect(admitted).toHaveLength(FIT);
    expect(refused).toHaveLength(40 - FIT);
    for (const err of refused) expectTokensRefusal(err);
    for (const { adm } of admitted) expect(adm.reservedTokens).toBe(RESERVED);
    // The window holds the calls in flight at their reservations.
    expect(await windows(metered.id)).toEqual([{ requests: FIT, tokens: FIT * RESERVED }]);

    // The first call used 150 of its 400: the other 250 come back, and one more call fits.
    const [first, ...others] = admitted as Array<{ adm: Admission; i: number }>;
    const service = (i: number) => (i % 2 ? b : a);
    await service(first!.i).settle(first!.adm, { inputTokens: 100, outputTokens: 50, status: 200 }).settled;
    expect((await windows(metered.id))[0]!.tokens).toBe(150 + (FIT - 1) * RESERVED);
    const more = await b.admit(metered, request);
    expectTokensRefusal(await a.admit(metered, request).catch((e: unknown) => e));

    // Settled, every call counts what it used: 150 + 2 × 311.
    await Promise.all([
      ...others.map(
        ({ adm, i }) => service(i).settle(adm, { inputTokens: 11, outputTokens: 300, status: 200 }).settled,
      ),
      b.settle(more, { inputTokens: 11, outputTokens: 300, status: 200 }).settled,
    ]);
    expect((await windows(metered.id))[0]!.tokens).toBe(150 + FIT * 311);
  });

  it('a failed call gives its whole reservation back', async () => {
    await awayFromMinuteEnd();
    const { metered, request } = await setup();
    const adm = await a.admit(metered, request);
    expect((await windows(metered.id))[0]!.tokens).toBe(RESERVED);
    await a.settle(adm, { inputTokens: 0, outputTokens: 0, status: 502 }).settled;
    expect((await windows(metered.id))[0]!.tokens).toBe(0);
  });

  it('refuses at once a call that reserves more than the whole limit, counting nothing', async () => {
    const { metered, request } = await setup();
    await expectCallOverLimit(a, metered, request);
    expect(await windows(metered.id)).toEqual([]);
  });
});

describe('tokens_per_minute with leases (the gateway, two replicas)', () => {
  let a: GatewayPolicyService;
  let b: GatewayPolicyService;
  beforeAll(() => {
    // Leases that stay open for the whole test: only a call that does not fit ends one.
    const leases = { spendMs: 30_000, ttlMs: 10_000 };
    a = new GatewayPolicyService(dbA, { leases });
    b = new GatewayPolicyService(dbB, { leases });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('never admits more reservations than the limit across both, and settles replace them', async () => {
    await awayFromMinuteEnd();
    const { metered, request } = await setup();
    const { admitted, refused } = await admitConcurrently([a, b], metered, request, 40);
    expect(admitted).toHaveLength(FIT);
    for (const err of refused) expectTokensRefusal(err);
    const [w] = await windows(metered.id);
    // What the replicas' leases hold of the window: never past the limit.
    expect(w!.tokens).toBeLessThanOrEqual(TPM);
    expect(w!.tokens).toBeGreaterThanOrEqual(FIT * RESERVED);

    // A settled call's unused tokens make room on its replica.
    const { adm, i } = admitted[0]!;
    const mine = i % 2 ? b : a;
    await mine.settle(adm, { inputTokens: 100, outputTokens: 50, status: 200 }).settled;
    const more = await mine.admit(metered, request);
    expectTokensRefusal(await mine.admit(metered, request).catch((e: unknown) => e));
    expect((await windows(metered.id))[0]!.tokens).toBeLessThanOrEqual(TPM);

    // Once every call has settled and the leases are given back, the window holds what was used.
    await Promise.all([
      ...admitted
        .slice(1)
        .map(
          ({ adm: x, i: j }) =>
            (j % 2 ? b : a).settle(x, { inputTokens: 11, outputTokens: 300, status: 200 }).settled,
        ),
      mine.settle(more, { inputTokens: 11, outputTokens: 300, status: 200 }).settled,
    ]);
    await a.close();
    await b.close();
    expect((await windows(metered.id))[0]!.tokens).toBe(150 + FIT * 311);
  });

  it('refuses at once a call that reserves more than the whole limit, taking no lease', async () => {
    const { metered, request } = await setup();
    await expectCallOverLimit(b, metered, request);
    expect(await windows(metered.id)).toEqual([]);
  });
});
