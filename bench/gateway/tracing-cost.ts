/**
 * Tracing's cost as bench/gateway reports it, from the c=64 cells of traced
 * and untraced API processes measured in the same ABBA rounds: one pair of
 * processes, or several of each pooled (with A/A ratios showing how far two
 * processes of the same code differ).
 */
import { blockRatios, pctCost } from '../lib/abba.js';
import { pct } from '../lib/gateway-targets.js';

/** Nearest-rank median, as every figure of this bench. */
const median = (xs: number[]) => pct(xs, 50);

/** One target's c=64 figures, per round in round order. */
export interface Cells {
  rps: number[];
  cpuUs: number[];
  mainUs: number[];
  pgUs: number[];
  totalUs: number[];
}

/**
 * Tracing's cost (target ≤ 10%, bench/RESULTS.md), three ways. Throughput: the ratio of the medians and the
 * median of per-round ratios, over all rounds and over the second half alone
 * (both processes warm; the first rounds can favour either). CPU: all the
 * CPU a request costs on the machine, traced vs untraced, which on saturated
 * cores is what throughput follows, and which other load on the machine moves far less.
 */
export function reportTracingCost(mode: string, traced: Cells, untraced: Cells): void {
  const ratios = traced.rps.map((x, r) => x / untraced.rps[r]!);
  const half = Math.floor(ratios.length / 2);
  const late = ratios.slice(half);
  const blocks = blockRatios(ratios);
  const cpuRatio = median(untraced.totalUs) / median(traced.totalUs);
  const lateCpu = median(untraced.totalUs.slice(half)) / median(traced.totalUs.slice(half));
  console.log(
    `${mode}: tracing's cost (target ≤ 10%):\n` +
      `  throughput, median over ABBA blocks ${blocks.length ? pctCost(median(blocks)) : 'n/a'} ` +
      `(blocks ${blocks.map((x) => x.toFixed(2)).join(' ')}); ratio of medians ${pctCost(median(traced.rps) / median(untraced.rps))}; ` +
      `median of per-round ratios ${pctCost(median(ratios))} (rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}); ` +
      `second half of the rounds ${pctCost(median(late))}\n` +
      `  all CPU per request traced/untraced ${Math.round(median(traced.totalUs))}/${Math.round(median(untraced.totalUs))} µs: ` +
      `${pctCost(cpuRatio)} (second half ${pctCost(lateCpu)}); ` +
      `API ${Math.round(median(traced.cpuUs))}/${Math.round(median(untraced.cpuUs))} µs ` +
      `(main thread ${Math.round(median(traced.mainUs))}/${Math.round(median(untraced.mainUs))} µs: ` +
      `${pctCost(median(untraced.mainUs) / median(traced.mainUs))}), ` +
      `Postgres ${Math.round(median(traced.pgUs))}/${Math.round(median(untraced.pgUs))} µs`,
  );
}

const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/**
 * Tracing's cost over several traced and untraced processes: per round, the
 * geometric mean of the traced processes' req/s over that of the untraced
 * ones; and the A/A ratios (first process of a side over its second), which
 * show how far two processes running the same code differ here.
 */
export function reportPooled(mode: string, traced: number[][], untraced: number[][]): void {
  const rounds = traced[0]!.length;
  const at = (cells: number[][], r: number) => geomean(cells.map((c) => c[r]!));
  const ratios = Array.from({ length: rounds }, (_, r) => at(traced, r) / at(untraced, r));
  const blocks = blockRatios(ratios);
  const aa = (cells: number[][]) => {
    const aaBlocks = cells.length < 2 ? [] : blockRatios(cells[0]!.map((x, r) => x / cells[1]![r]!));
    return aaBlocks.length ? median(aaBlocks).toFixed(3) : 'n/a';
  };
  console.log(
    `${mode}, pooled over ${traced.length} traced and ${untraced.length} untraced processes: ` +
      `tracing costs ${blocks.length ? pctCost(median(blocks)) : 'n/a'} (median over ABBA blocks of two rounds; ` +
      `blocks ${blocks.map((x) => x.toFixed(2)).join(' ')}); median of per-round ratios ${pctCost(median(ratios))} ` +
      `(rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}); A/A median ratios over blocks: traced ${aa(traced)}, untraced ${aa(untraced)}`,
  );
}
