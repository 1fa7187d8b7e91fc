import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addBuckets,
  bucketIndex,
  bucketMidpoint,
  bucketsFromJson,
  bucketsToJson,
  percentiles,
  PERCENTILE_RELATIVE_ERROR,
  type Buckets,
  type LatencySummary,
} from '../../../core/telemetry/rollup-histogram.js';

/** Postgres' percentile_cont: the value at rank p × (n − 1), interpolated between the nearest two. */
function percentileCont(sorted: number[], p: number): number {
  const rank = p * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (rank - lo) * (sorted[hi]! - sorted[lo]!);
}

function summarize(values: number[]): LatencySummary {
  const buckets: Buckets = new Map();
  for (const v of values) addBuckets(buckets, [[bucketIndex(v), 1]]);
  return { count: values.length, min: Math.min(...values), max: Math.max(...values), buckets };
}

/** A seeded generator (mulberry32): the same durations on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PS = [0.5, 0.9, 0.95, 0.99, 0.999];

describe('latency histogram (base-2 exponential, scale 4)', () => {
  it('documents a relative error of about 2.2 %', () => {
    expect(PERCENTILE_RELATIVE_ERROR).toBeCloseTo(0.0219, 4);
  });

  it('puts each duration in the bucket whose bounds hold it, its midpoint within the error', () => {
    for (const v of [0.001, 0.37, 1, 1.5, 2, 3, 10, 99.9, 1000, 12_345.678, 86_400_000]) {
      const i = bucketIndex(v);
      const lower = 2 ** (i / 16);
      const upper = 2 ** ((i + 1) / 16);
      expect(v, `${v}`).toBeGreaterThan(lower * (1 - 1e-12));
      expect(v, `${v}`).toBeLessThanOrEqual(upper * (1 + 1e-12));
      expect(Math.abs(bucketMidpoint(i) - v) / v).toBeLessThanOrEqual(PERCENTILE_RELATIVE_ERROR + 1e-12);
    }
    // Zero (and anything under a nanosecond) counts as 1 ns.
    expect(bucketIndex(0)).toBe(bucketIndex(1e-6));
    expect(bucketIndex(-1)).toBe(bucketIndex(1e-6));
  });

  it('reads percentiles from seeded durations within the documented error of percentile_cont', () => {
    const rnd = random(42);
    const distributions: Record<string, () => number> = {
      // Log-normal around 40 ms: an HTTP endpoint.
      lognormal: () =>
        40 * Math.exp(0.8 * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd())),
      // Fast queries with a slow tail of model calls.
      bimodal: () => (rnd() < 0.9 ? 0.2 + rnd() * 2 : 800 + rnd() * 9_000),
      uniform: () => 1 + rnd() * 999,
      // Few distinct values, many repeats.
      discrete: () => [3, 5, 8, 13][Math.floor(rnd() * 4)]!,
    };
    for (const [name, draw] of Object.entries(distributions)) {
      for (const n of [1, 2, 7, 100, 10_000]) {
        const values = Array.from({ length: n }, draw);
        const sorted = [...values].sort((a, b) => a - b);
        const got = percentiles(summarize(values), PS);
        PS.forEach((p, k) => {
          const exact = percentileCont(sorted, p);
          expect(Math.abs(got[k]! - exact) / exact, `${name} n=${n} p${p * 100}`).toBeLessThanOrEqual(
            PERCENTILE_RELATIVE_ERROR + 1e-9,
          );
        });
      }
    }
  });

  it('merges histograms by adding counts: two replicas give the histogram of all their durations', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.001, max: 1e7, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.array(fc.double({ min: 0.001, max: 1e7, noNaN: true }), { minLength: 1, maxLength: 300 }),
        (a, b) => {
          const ha = summarize(a);
          const hb = summarize(b);
          // Through JSON, as the rows travel (and as trace_rollup_merge adds them in SQL).
          const merged: LatencySummary = {
            count: ha.count + hb.count,
            min: Math.min(ha.min, hb.min),
            max: Math.max(ha.max, hb.max),
            buckets: addBuckets(
              bucketsFromJson(JSON.parse(JSON.stringify(bucketsToJson(ha.buckets)))),
              bucketsFromJson(JSON.parse(JSON.stringify(bucketsToJson(hb.buckets)))),
            ),
          };
          const all = [...a, ...b];
          expect(merged).toEqual(summarize(all));
          const sorted = all.sort((x, y) => x - y);
          const got = percentiles(merged, PS);
          PS.forEach((p, k) => {
            const exact = percentileCont(sorted, p);
            expect(Math.abs(got[k]! - exact)).toBeLessThanOrEqual(
              exact * PERCENTILE_RELATIVE_ERROR * (1 + 1e-9),
            );
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers the exact min and max at the ends, 0 for no data, and ignores malformed stored buckets', () => {
    const h = summarize([5, 7, 100]);
    expect(percentiles(h, [0, 1])).toEqual([5, 100]);
    expect(percentiles({ count: 0, min: 0, max: 0, buckets: new Map() }, [0.5])).toEqual([0]);
    expect(bucketsFromJson({ '3': 2, x: 1, '4.5': 1, '5': 'two', '6': -1 })).toEqual(new Map([[3, 2]]));
    expect(bucketsFromJson(null)).toEqual(new Map());
  });
});
