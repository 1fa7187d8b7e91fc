/**
 * Observability's cost (target: the default settings cost ≤ 5% more CPU per
 * request than `otel_sdk_disabled`), from cells measured in the same ABBA
 * rounds: API processes started with different observability settings:
 * `default`, `always_on`, `otel_sdk_disabled` (the target's baseline: tracing
 * off, counting and metrics on) and `off` (everything off, for the whole
 * cost). The primary figure is CPU per request, the API process's plus
 * PostgreSQL's (all its backends, from /proc), which other load on the machine
 * moves far less than throughput; a ratio is the median over ABBA blocks of
 * two rounds (`abba.ts`).
 */
import { blockRatios } from './abba.js';

/** The cells' environments (API processes), besides a process with no settings (`default`). */
export const COST_CELL_ENVS = {
  /** Every trace stored: the behaviour before sampled storage. */
  always_on: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
  /** Tracing off; spans still made and counted (rollups) and Prometheus metrics recorded. */
  otel_sdk_disabled: { OTEL_SDK_DISABLED: 'true' },
  /** The baseline: everything observability off (no spans stored, none counted, no metrics). */
  off: { OTEL_SDK_DISABLED: 'true', METRICS_ENABLED: 'false' },
} as const satisfies Record<string, Record<string, string>>;

export interface CostCell {
  name: string;
  /** Per round, in round order. */
  rps: number[];
  /** Per round: the API process's CPU plus PostgreSQL's, µs per request. */
  cpuUs: number[];
  /** Per round, of which PostgreSQL's (optional). */
  pgUs?: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Median over ABBA blocks of a/b per round, or NaN with fewer than two rounds. */
function blockMedian(a: number[], b: number[]): { ratio: number; blocks: number[] } {
  const blocks = blockRatios(a.map((x, r) => x / b[r]!));
  return { ratio: blocks.length ? median(blocks) : NaN, blocks };
}

/**
 * Prints, per cell: CPU µs per request (API + PostgreSQL, median over rounds),
 * req/s (median), and the ratios cell/baseline of CPU per request and of
 * throughput, each the median over ABBA blocks, against two baselines: the
 * target's (`otel_sdk_disabled`: tracing off, counting and metrics on; the
 * target is read against it) and `off` (everything off: the whole cost).
 */
export function reportCostCells(title: string, cells: CostCell[], targetPct = 5): void {
  const target = cells.find((c) => c.name === 'otel_sdk_disabled');
  const off = cells.find((c) => c.name === 'off');
  console.log(
    `\n${title}: observability's cost (same rounds; ratios are medians over ABBA blocks of two rounds; ` +
      `target: default ≤ ${targetPct}% more CPU per request than otel_sdk_disabled)`,
  );
  for (const c of cells) {
    const cpu = median(c.cpuUs);
    const pg = c.pgUs ? `, of which Postgres ${median(c.pgUs).toFixed(0)}` : '';
    console.log(
      `  ${c.name.padEnd(18)} CPU ${cpu.toFixed(0).padStart(5)} µs/req (API + Postgres${pg}), ${Math.round(median(c.rps))} req/s`,
    );
    for (const base of [target, off]) {
      if (!base || base === c) continue;
      const cpuR = blockMedian(c.cpuUs, base.cpuUs);
      const rpsR = blockMedian(c.rps, base.rps);
      let line =
        `    /${base.name}: CPU ×${cpuR.ratio.toFixed(3)} (${(100 * (cpuR.ratio - 1)).toFixed(1)}%; blocks ` +
        `${cpuR.blocks.map((x) => x.toFixed(2)).join(' ')}), throughput ×${rpsR.ratio.toFixed(3)} (blocks ` +
        `${rpsR.blocks.map((x) => x.toFixed(2)).join(' ')})`;
      if (c.name === 'default' && base === target)
        line += cpuR.ratio - 1 <= targetPct / 100 ? ' — target met' : ' — target NOT met';
      console.log(line);
    }
  }
}
