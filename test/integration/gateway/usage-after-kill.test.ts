/**
 * A gateway replica killed with SIGKILL in the middle of traffic: every call
 * whose answer reached its caller whole (a JSON body, or a stream up to its
 * closing `[DONE]`) has its usage row in Postgres. The API holds an answer's
 * last bytes until the row is written (core/metering/usage-writer.ts
 * addDurable), so nothing answered waits in a dead process's memory.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { postConfig, spawnApi } from '../../helpers/api-process.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

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

  it('has stored the usage row of every call it answered whole', async () => {
    const api = await spawnApi({
      DATABASE_URL: url,
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      SECRETS_KEY: randomBytes(32).toString('base64'),
    });
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
        (await db('gateway_usage').whereIn('trace_id', answered).select('trace_id')).map(
          (r: { trace_id: string }) => r.trace_id,
        ),
      );
      const lost = answered.filter((t) => !stored.has(t));
      expect(lost).toEqual([]);
    } finally {
      api.child.kill('SIGKILL');
    }
  }, 60_000);
});
