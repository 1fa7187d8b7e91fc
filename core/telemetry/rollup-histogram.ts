/**
 * Latency histograms that add up across minutes and replicas: OpenTelemetry's
 * base-2 exponential buckets at scale 4, i.e. 16 buckets per doubling. Bucket
 * `i` holds the durations in (2^(i/16), 2^((i+1)/16)] milliseconds; its
 * representative value is the geometric midpoint 2^((i+½)/16), within a factor
 * 2^(1/32) of anything in the bucket. Two histograms merge by adding counts
 * index by index (in SQL: `trace_rollup_merge`), whatever process or minute
 * they come from, and the merge is exactly the histogram of the union.
 */
export const HISTOGRAM_SCALE = 4;
const PER_DOUBLING = 2 ** HISTOGRAM_SCALE;

/**
 * The largest relative error of a percentile read from a histogram, against
 * `percentile_cont` over the exact durations: 2^(1/32) − 1 ≈ 2.19 %. Each value
 * taken is its bucket's midpoint, off by at most that factor; interpolating
 * between two such values keeps the bound; clamping to the exact min and max
 * only brings them closer.
 */
export const PERCENTILE_RELATIVE_ERROR = 2 ** (1 / (2 * PER_DOUBLING)) - 1;

/** Durations under 1 ns (0 included: Node's clock counts nanoseconds) count as 1 ns. */
const MIN_MS = 1e-6;

/** The bucket of a duration in milliseconds. */
export function bucketIndex(ms: number): number {
  return Math.ceil(Math.log2(ms > MIN_MS ? ms : MIN_MS) * PER_DOUBLING) - 1;
}

/** The geometric midpoint of bucket `index`, in milliseconds. */
export function bucketMidpoint(index: number): number {
  return 2 ** ((index + 0.5) / PER_DOUBLING);
}

/** Counts by bucket index; JSON object keys are the indexes as text. */
export type Buckets = Map<number, number>;

export function addBuckets(into: Buckets, from: Iterable<[number, number]>): Buckets {
  for (const [i, n] of from) into.set(i, (into.get(i) ?? 0) + n);
  return into;
}

export function bucketsToJson(b: Buckets): Record<string, number> {
  return Object.fromEntries(b);
}

/** A stored histogram back to counts; anything that is not an integer index with a count is ignored. */
export function bucketsFromJson(json: unknown): Buckets {
  const out: Buckets = new Map();
  if (json === null || typeof json !== 'object') return out;
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
    const i = Number(k);
    const n = Number(v);
    if (Number.isInteger(i) && Number.isFinite(n) && n > 0) out.set(i, (out.get(i) ?? 0) + n);
  }
  return out;
}

export interface LatencySummary {
  /** The exact count (the buckets' counts add up to it). */
  count: number;
  /** Exact extremes, in ms. */
  min: number;
  max: number;
  buckets: Buckets;
}

/**
 * Percentiles (each 0..1) the way `percentile_cont` defines them — the value
 * at rank p × (count − 1), interpolated linearly between the two nearest
 * ranks — with each ranked value replaced by its bucket's midpoint, clamped to
 * [min, max], and the first and last ranks taken as the exact min and max.
 * Within PERCENTILE_RELATIVE_ERROR of the exact result. 0 for no data.
 */
export function percentiles(h: LatencySummary, ps: number[]): number[] {
  if (h.count <= 0) return ps.map(() => 0);
  const sorted = [...h.buckets.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const valueAt = (rank: number): number => {
    if (rank <= 0) return h.min;
    if (rank >= h.count - 1) return h.max;
    let seen = 0;
    for (const [index, n] of sorted) {
      seen += n;
      if (rank < seen) return Math.min(h.max, Math.max(h.min, bucketMidpoint(index)));
    }
    // Buckets holding fewer values than `count` (never from our writers): the largest is the max.
    return h.max;
  };
  return ps.map((p) => {
    const rank = Math.min(1, Math.max(0, p)) * (h.count - 1);
    const lo = Math.floor(rank);
    const a = valueAt(lo);
    if (rank === lo) return a;
    return a + (rank - lo) * (valueAt(lo + 1) - a);
  });
}
