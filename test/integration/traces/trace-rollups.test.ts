/**
 * The rollups behind the trace statistics, against the real table: several
 * processes flushing into it add up, percentiles from the merged histogram
 * stay within the documented error, what was flushed survives the processes,
 * and a process killed between flushes loses only what it counted since its
 * last one.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { TraceRollupsRepository } from '../../../core/repositories/trace-rollups.repository.js';
import { PERCENTILE_RELATIVE_ERROR } from '../../../core/telemetry/rollup-histogram.js';
import { TraceRollups } from '../../../core/telemetry/rollups.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { fakeSpan, type FakeSpanInit } from '../../helpers/fake-span.js';
import { databaseUrl } from '../../helpers/services.js';

interface StatRow {
  service_name: string;
  span_name: string;
  call_count: number;
  error_count: number;
  error_rate: number;
  avg_ms: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** One replica: its own pool and aggregator, flushing into the shared table. */
function replica() {
  const db = createDb(databaseUrl(), { max: 2 });
  const rollups = new TraceRollups(new TraceRollupsRepository(db), { intervalMs: 60_000 });
  return {
    rollups,
    record: (spans: FakeSpanInit[]) => spans.forEach((s) => rollups.record(fakeSpan(s))),
    close: async () => {
      await rollups.shutdown();
      await db.destroy();
    },
    /** A process killed: its timer stops, nothing more is flushed. */
    kill: async () => {
      rollups.stop();
      await db.destroy();
    },
  };
}

function percentileCont(sorted: number[], p: number): number {
  const rank = p * (sorted.length - 1);
  const lo = Math.floor(rank);
  return sorted[lo]! + (rank - lo) * (sorted[Math.ceil(rank)]! - sorted[lo]!);
}

/** A seeded generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('trace rollups', () => {
  let api: TestApi;
  let db: Db;

  beforeAll(async () => {
    api = await startTestApi();
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api?.close();
    await db?.destroy();
  });

  const endpointStats = async (service: string, window = '') => {
    const res = await api.request<StatRow[]>(
      'GET',
      `/api/agent-server/traces/stats/endpoints?service_name=${service}${window}`,
    );
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it("merges two replicas' flushes over two minutes: exact counts, percentiles within the documented error", async () => {
    const service = `rollup-${randomUUID()}`;
    const rnd = random(7);
    const minute = Math.floor((Date.now() - 5 * 60_000) / 60_000) * 60_000;
    // A log-normal body around 30 ms and a slow tail: 4 000 durations.
    const durations = Array.from({ length: 4_000 }, (_, i) =>
      i % 50 === 0
        ? 2_000 + rnd() * 8_000
        : 30 * Math.exp(0.7 * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd())),
    );
    const spans = durations.map((durationMs, i) => ({
      service,
      name: 'GET /seeded',
      durationMs,
      error: i % 7 === 0,
      startMs: minute + (i % 2) * 60_000 + (i % 997),
    }));
    const [a, b] = [replica(), replica()];
    // Each replica gets a random half and flushes twice, the two concurrently: upserts of the same keys add up.
    const halves: [FakeSpanInit[], FakeSpanInit[]] = [[], []];
    for (const s of spans) halves[rnd() < 0.5 ? 0 : 1].push(s);
    for (const half of [0, 1] as const) {
      const cut = Math.floor(halves[half].length / 2);
      [a, b][half]!.record(halves[half].slice(0, cut));
      await Promise.all([a.rollups.flush(), b.rollups.flush()]);
      [a, b][half]!.record(halves[half].slice(cut));
    }
    await Promise.all([a.close(), b.close()]);
    expect(a.rollups.stats().failed_flushes + b.rollups.stats().failed_flushes).toBe(0);

    const [row] = await endpointStats(service);
    const sorted = [...durations].sort((x, y) => x - y);
    const errors = spans.filter((s) => s.error).length;
    expect(row).toMatchObject({ service_name: service, span_name: 'GET /seeded', call_count: 4_000 });
    expect(row!.error_count).toBe(errors);
    expect(row!.error_rate).toBeCloseTo(errors / 4_000, 3);
    expect(row!.avg_ms).toBeCloseTo(durations.reduce((x, y) => x + y, 0) / 4_000, 2);
    expect(row!.max_ms).toBeCloseTo(sorted.at(-1)!, 3);
    for (const [field, p] of [
      ['p50_ms', 0.5],
      ['p95_ms', 0.95],
      ['p99_ms', 0.99],
    ] as const) {
      const exact = percentileCont(sorted, p);
      // The documented bound, plus the microsecond rounding of the answer.
      expect(Math.abs(row![field] - exact), `${field}: ${row![field]} vs ${exact}`).toBeLessThanOrEqual(
        exact * PERCENTILE_RELATIVE_ERROR + 0.0005,
      );
    }
    // One row per minute and key in the table, whatever the replicas and flushes.
    const rows = await db('trace_rollups').where({ service_name: service }).select('minute', 'status');
    expect(rows).toHaveLength(4); // 2 minutes × (ok, error)

    // Windows resolve to the minute: any window touching the first minute counts it whole.
    const inside = new Date(minute + 30_000).toISOString();
    const alsoInside = new Date(minute + 40_000).toISOString();
    const [first] = await endpointStats(service, `&start_time=${inside}&end_time=${alsoInside}`);
    expect(first!.call_count).toBe(2_000);
    const before = new Date(minute - 1).toISOString();
    expect(await endpointStats(service, `&end_time=${before}`)).toEqual([]);
  });

  it('keeps what was flushed across restarts; a replica killed between flushes loses only its last interval', async () => {
    const service = `rollup-restart-${randomUUID()}`;
    const span = { service, name: 'POST /work', durationMs: 12 };
    const first = replica();
    first.record(Array.from({ length: 10 }, () => span));
    await first.close(); // a graceful stop flushes
    // A new process (its own pool) reads what the previous one wrote.
    const second = replica();
    expect((await endpointStats(service))[0]).toMatchObject({ call_count: 10 });

    second.record(Array.from({ length: 5 }, () => span));
    await second.rollups.flush();
    second.record(Array.from({ length: 3 }, () => ({ ...span, error: true })));
    await second.kill(); // the 3 since its last flush are lost; nothing else
    const [row] = await endpointStats(service);
    expect(row).toMatchObject({ call_count: 15, error_count: 0 });
  });

  it('keeps counts of a failed flush for the next one', async () => {
    const service = `rollup-retry-${randomUUID()}`;
    const down = createDb('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    const up = createDb(databaseUrl(), { max: 1 });
    let repo = new TraceRollupsRepository(down);
    const rollups = new TraceRollups({ add: (rows) => repo.add(rows) }, { intervalMs: 60_000 });
    rollups.record(fakeSpan({ service, name: 'GET /retry', durationMs: 4 }));
    await rollups.flush();
    expect(rollups.stats()).toMatchObject({ failed_flushes: 1, pending_keys: 1, flushed_rows: 0 });
    repo = new TraceRollupsRepository(up);
    rollups.record(fakeSpan({ service, name: 'GET /retry', durationMs: 6 }));
    await rollups.shutdown();
    expect(rollups.stats()).toMatchObject({ failed_flushes: 1, pending_keys: 0, flushed_rows: 1 });
    expect((await endpointStats(service))[0]).toMatchObject({ call_count: 2, avg_ms: 5, max_ms: 6 });
    await Promise.all([down.destroy(), up.destroy()]);
  });

  it('prunes minutes older than the retention, as for spans', async () => {
    const service = `rollup-prune-${randomUUID()}`;
    const r = replica();
    r.record([
      { service, name: 'old', durationMs: 1, startMs: Date.now() - 8 * 86_400_000 },
      { service, name: 'recent', durationMs: 1, startMs: Date.now() - 6 * 86_400_000 },
    ]);
    await r.close();
    expect(await new TraceRollupsRepository(db).prune(7)).toBeGreaterThanOrEqual(1);
    expect(await db('trace_rollups').where({ service_name: service }).pluck('span_name')).toEqual(['recent']);
  });
});
