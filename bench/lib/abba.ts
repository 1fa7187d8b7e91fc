/**
 * Ratios of rounds run in ABBA order (every other round runs its cells in
 * reverse), two rounds at a time. A cell's place (first after a long idle, or
 * right after a traced cell) then alternates between the two sides of a ratio
 * from one round to the next, so per-round ratios fall in two clusters
 * (bench/gateway, 2026-11-23: about 0.78 in forward rounds and 0.93 in
 * reverse ones), and their median lands on either side of the gap from run
 * to run. A block of two rounds has each place once on each side; its
 * geometric mean cancels a place's effect. An odd last round is left out.
 */
export function blockRatios(ratios: number[]): number[] {
  const blocks: number[] = [];
  for (let r = 0; r + 1 < ratios.length; r += 2) blocks.push(Math.sqrt(ratios[r]! * ratios[r + 1]!));
  return blocks;
}

/** A throughput ratio (traced / untraced) as the cost it stands for: 0.88 → "12.0%". */
export const pctCost = (ratio: number) => `${(100 * (1 - ratio)).toFixed(1)}%`;
