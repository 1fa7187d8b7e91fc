/**
 * A gateway replica killed with SIGKILL in the middle of traffic: every call
 * whose answer reached its caller whole (a JSON body, or a stream up to its
 * closing `[DONE]`) has its usage row in Postgres, and its budget charge.
 * The API stores a call's row while the call goes upstream, at its worst case
 * (core/metering/usage-writer.ts addProvisional), and holds the answer's last
 * bytes until that row is stored, so nothing answered waits in a dead
 * process's memory. Once the dead replica's budget lease expires, the next
 * replica to take a lease of the key charges what its calls' rows say, so
 * the ledger equals the usage log.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { defaultOutputCeiling } from '../../../core/metering/pricing.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { postConfig, spawnApi, type ApiProcess } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

const LEASE_TTL_MS = 2_000;

async function chatThrough(api: ApiProcess, secret: string): Promise<number> {
  const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('a gateway replica killed mid-traffic', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let url: string;
  let db: Db;
  let vendor: ScriptedVendor;

  beforeAll(async () => {
    scratch = await createScratchDatabase('usage_kill');
    url = scratch.url;
    db = createDb(url, { max: 2 });
    await migrateLatest(db);
    vendor = await startOpenAiVendor();
  });

  afterAll(async () => {
    await db?.destroy();
    await vendor?.close();
    await scratch?.drop();
  });

  it('has stored the usage row and the budget charge of every call it answered whole', async () => {
    const env = {
      DATABASE_URL: url,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      GATEWAY_LEASE_TTL_MS: String(LEASE_TTL_MS),
    };
    const api = await spawnApi(env);
    let next: ApiProcess | undefined;
    try {
      const post = (p: string, body: unknown) => postConfig(api.url, p, body);
      const provider = await post('/providers', {
        name: 'vendor',
        provider_type: 'openai',
        base_url: `${vendor.url}/v1`,
        api_key: 'sk-vendor',
      });
      const key = await post('/virtual-keys', {
        name: 'k',
        providers: [{ provider_id: provider.id, model_names: ['*'] }],
        budget: { max_usd: 1_000, period: 'day' },
      });

      /** Trace ids of the calls whose whole answer arrived. */
      const answered: string[] = [];
      let calls = 0;
      const call = async (stream: boolean) => {
        calls++;
        const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret_key}` },
          body: JSON.stringify({
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: 'hi' }],
            ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
          }),
        });
        const text = await res.text();
        const whole = stream
          ? text.includes('data: [DONE]')
          : res.status === 200 && Boolean((JSON.parse(text) as { id?: string }).id);
        if (whole) answered.push(res.headers.get('x-trace-id')!);
      };
      let running = true;
      const client = async (i: number) => {
        while (running) await call(i % 2 === 1).catch(() => undefined);
      };
      const clients = Array.from({ length: 16 }, (_, i) => client(i));
      await new Promise((r) => setTimeout(r, 1_500));
      api.child.kill('SIGKILL');
      running = false;
      await Promise.all(clients);

      expect(answered.length).toBeGreaterThan(50);
      expect(calls).toBeGreaterThan(answered.length); // some were cut by the kill
      const stored = new Set(
        (await db('gateway_usage').whereIn('trace_id', answered).select('trace_id')).map((r) => r.trace_id),
      );
      const lost = answered.filter((t) => !stored.has(t));
      expect(lost).toEqual([]);
      // A row the dead replica could not complete stays at the call's worst case, never less.
      const rows = (await db('gateway_usage').whereIn('trace_id', answered)) as Array<{
        provisional: boolean;
        status: number;
        output_tokens: number;
      }>;
      const provisional = rows.filter((r) => r.provisional);
      for (const r of provisional)
        expect(r).toMatchObject({ status: 0, output_tokens: defaultOutputCeiling('gpt-4o-mini') });
      for (const r of rows.filter((r) => !r.provisional)) expect(r.status).toBe(200);
      console.log(`${answered.length} answered, ${provisional.length} rows left provisional by the kill`);

      // Another replica takes a lease of the key once the dead one's has expired, then stops.
      await new Promise((r) => setTimeout(r, LEASE_TTL_MS + 200));
      next = await spawnApi(env);
      expect(await chatThrough(next, key.secret_key!)).toBe(200);
      await next.stop();
      expect(await db('gateway_budget_leases').where({ virtual_key_id: key.id })).toEqual([]);
      // The ledger and the usage log are written apart (the log in batches off the request path):
      // read both until they agree, or for 10 s, then compare.
      const settled = async () => {
        const ledger = (await db('gateway_budget_ledger').where({ virtual_key_id: key.id }).first()) as {
          spent_usd: string;
          reserved_usd: string;
        };
        const logged = (await db('gateway_usage')
          .where({ virtual_key_id: key.id })
          .sum({ s: 'cost_usd' })
          .first()) as { s: string };
        return { ledger, logged };
      };
      let { ledger, logged } = await settled();
      for (let i = 0; i < 100 && Math.abs(Number(ledger.spent_usd) - Number(logged.s)) > 5e-9; i++) {
        await new Promise((r) => setTimeout(r, 100));
        ({ ledger, logged } = await settled());
      }
      expect(Number(ledger.reserved_usd)).toBeCloseTo(0, 8);
      expect(Number(ledger.spent_usd)).toBeCloseTo(Number(logged.s), 8);
    } finally {
      api.child.kill('SIGKILL');
      next?.child.kill('SIGKILL');
    }
  }, 60_000);
});
