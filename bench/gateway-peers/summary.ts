/**
 * The figures of bench/gateway-peers against their targets: ABBA ratios,
 * number formats, and the summary printed at the end of a run.
 */
import { blockRatios } from '../lib/abba.js';
import { median } from '../lib/gateway-targets.js';

export const ms = (x: number) => x.toFixed(3);
export const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
export const list = (xs: number[], digits = 2) =>
  xs.length ? xs.map((x) => x.toFixed(digits)).join(' ') : 'none';

/** Median over ABBA blocks of per-round a/b; with one round, that round's ratio. */
export function abbaRatio(a: number[], b: number[]): { ratio: number; blocks: number[]; rounds: number[] } {
  const rounds = a.map((x, r) => x / b[r]!);
  const blocks = blockRatios(rounds);
  return { ratio: blocks.length ? median(blocks) : median(rounds), blocks, rounds };
}

/** The summary's lines: mode, figure, value, target, verdict (met / MISSED / reference), note. */
export const summary: string[][] = [];
export const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
export function printSummary(): void {
  const widths = [0, 1, 2, 3, 4].map((c) => Math.max(...summary.map((row) => row[c]!.length)));
  console.log('\nsummary (targets in bench/RESULTS.md; ratios are medians over ABBA blocks of two rounds):');
  for (const row of summary)
    console.log(
      `  ${row
        .map((cell, c) => (c === 2 ? cell.padStart(widths[c]!) : c < 5 ? cell.padEnd(widths[c]!) : cell))
        .join('  ')
        .trimEnd()}`,
    );
}
