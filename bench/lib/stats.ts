/** The few statistics the door benchmarks print: percentiles, medians and signed differences in ms. */
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

export const pct = (xs: number[], p: number) =>
  sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export const median = (xs: number[]) => {
  const s = sorted(xs);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)} ms`;
