/**
 * US dollars as the console shows them everywhere (usage, runs, playground,
 * traces): a currency sign, cents for a dollar and more, and for less at least
 * four decimals and always two significant digits, so a call's $0.000011 is not
 * rounded to $0.0000.
 */
const formatters = new Map<number, Intl.NumberFormat>();

function formatter(decimals: number): Intl.NumberFormat {
  let f = formatters.get(decimals);
  if (!f) {
    f = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: 'USD',
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals,
    });
    formatters.set(decimals, f);
  }
  return f;
}

/** Decimals to show: 2 from a dollar up, else enough for two significant digits (4 at least, 12 at most). */
function decimalsFor(usd: number): number {
  const abs = Math.abs(usd);
  if (abs === 0 || abs >= 1) return 2;
  return Math.min(12, Math.max(4, 1 - Math.floor(Math.log10(abs))));
}

/** `usd` as money ($0.00, $0.000011, $0.0123, $12.35), or `missing` when there is no amount. */
export function formatUsd(usd: number | null | undefined, missing = '—'): string {
  if (usd == null || !Number.isFinite(usd)) return missing;
  return formatter(decimalsFor(usd)).format(usd);
}
