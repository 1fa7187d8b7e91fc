/**
 * Provisional usage rows (core/metering/usage-writer.ts addProvisional): a
 * gateway call's row is stored while the call goes upstream, charged at its
 * worst case, and completed with the call's outcome after the answer has
 * left. These tests drive the writer against the real database, including
 * the orders a busy replica meets: the outcome before the insert has left,
 * while it is in flight, and while the database is unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { UsageWriter, type UsageCompletion, type UsageRow } from '../../../core/metering/usage-writer.js';
import { createVirtualKey } from '../../helpers/factories/config.js';
import { startHarness, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const newKey = () =>
  createVirtualKey(h.api, { providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }] });

/** A call's worst case, as the gateway stores it before the outcome. */
const worstCase = (keyId: string): UsageRow => ({
  virtual_key_id: keyId,
  provider_id: null,
  provider_name: 'p',
  model: 'm',
  input_tokens: 10,
  output_tokens: 4096,
  cost_usd: 0.5,
  latency_ms: 0,
  status: 0,
  trace_id: 'trace-1',
  created_at: new Date(),
});
const outcome: Omit<UsageCompletion, 'id'> = {
  input_tokens: 12,
  output_tokens: 3,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: 0.001,
  latency_ms: 7,
  status: 200,
  trace_id: 'trace-1',
};

type StoredRow = Pick<UsageRow, 'input_tokens' | 'output_tokens' | 'status' | 'provisional'> & {
  cost_usd: string;
};
const rowsOf = (keyId: string): Promise<StoredRow[]> =>
  h.api.server.deps
    .db('gateway_usage')
    .where({ virtual_key_id: keyId })
    .select('input_tokens', 'output_tokens', 'cost_usd', 'status', 'provisional');
const asCompleted = {
  input_tokens: 12,
  output_tokens: 3,
  cost_usd: '0.00100000',
  status: 200,
  provisional: false,
};
const asWorstCase = {
  input_tokens: 10,
  output_tokens: 4096,
  cost_usd: '0.50000000',
  status: 0,
  provisional: true,
};

/** The harness's Db, except that `raw` (the writer's statements) can be held or made to fail. */
function controlledDb() {
  const db = h.api.server.deps.db;
  const control = { hold: undefined as Promise<void> | undefined, failures: 0 };
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'raw')
        return async (...args: Parameters<typeof db.raw>) => {
          if (control.failures-- > 0)
            throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' });
          await control.hold;
          return (await target.raw(...args)) as unknown;
        };
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { db: proxy, control };
}

const options = { flushMs: 60_000, completeMs: 60_000, maxBatch: 500, maxQueue: 20_000 };

describe('UsageWriter.addProvisional', () => {
  it('stores the worst case before the outcome and completes it with the outcome', async () => {
    const key = await newKey();
    const writer = new UsageWriter(h.api.server.deps.db, createLogger('silent'), options);
    // The gateway stores a provisional row only while the writer is idle.
    expect(writer.idle()).toBe(true);
    const row = writer.addProvisional(worstCase(key.id));
    expect(writer.idle()).toBe(false);
    await row.stored(5_000);
    await new Promise((r) => setImmediate(r));
    expect(writer.idle()).toBe(true);
    expect(await rowsOf(key.id)).toEqual([asWorstCase]);
    row.complete(outcome);
    // Completions wait for the timed flush (completeMs), off the answer's path.
    expect(await rowsOf(key.id)).toEqual([asWorstCase]);
    await writer.flush();
    expect(await rowsOf(key.id)).toEqual([asCompleted]);
    await writer.close();
  });

  it('writes the final row at once when the outcome comes before the insert leaves', async () => {
    const key = await newKey();
    const writer = new UsageWriter(h.api.server.deps.db, createLogger('silent'), options);
    const row = writer.addProvisional(worstCase(key.id));
    row.complete(outcome);
    await row.stored(5_000);
    expect(await rowsOf(key.id)).toEqual([asCompleted]);
    await writer.close();
  });

  it('completes a row whose outcome came while its insert was in flight', async () => {
    const key = await newKey();
    const { db, control } = controlledDb();
    let release!: () => void;
    control.hold = new Promise((r) => (release = r));
    const writer = new UsageWriter(db, createLogger('silent'), options);
    const row = writer.addProvisional(worstCase(key.id));
    // The insert has left (setImmediate) and is held.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    row.complete(outcome);
    release();
    await row.stored(5_000);
    expect(await rowsOf(key.id)).toEqual([asWorstCase]);
    await writer.flush();
    expect(await rowsOf(key.id)).toEqual([asCompleted]);
    await writer.close();
  });

  it('keeps a row through an unreachable database, with an outcome that came meanwhile', async () => {
    const key = await newKey();
    const { db, control } = controlledDb();
    control.failures = 1;
    const writer = new UsageWriter(db, createLogger('silent'), options);
    const row = writer.addProvisional(worstCase(key.id));
    // The answer waits at most its bound for a row the database cannot take.
    const started = Date.now();
    await row.stored(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await rowsOf(key.id)).toEqual([]);
    row.complete(outcome);
    await writer.flush();
    expect(await rowsOf(key.id)).toEqual([asCompleted]);
    expect(writer.droppedRows).toBe(0);
    await writer.close();
  });
});

describe('a gateway call', () => {
  it('has its row at once, and the outcome in it within the completion time', async () => {
    const key = await newKey();
    const res = await chatRequest(h.api, 'openai', `${h.providers.openai.name}/m`, {
      secret: key.secret_key,
    });
    const answer = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(res.status).toBe(200);
    // Stored before the answer's last bytes: there now, provisional or already complete.
    expect(await rowsOf(key.id)).toHaveLength(1);
    await h.api.server.deps.usage.flush();
    const [row] = await rowsOf(key.id);
    expect(row).toMatchObject({
      input_tokens: answer.usage.prompt_tokens,
      output_tokens: answer.usage.completion_tokens,
      status: 200,
      provisional: false,
    });
  });
});
