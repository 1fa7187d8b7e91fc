/**
 * Usage buckets → rows for @mantine/charts: one row per bucket, one column
 * per group (per key or per model). Columns are named s0, s1, … (recharts
 * reads dots in a data key as a path; model names have dots and slashes),
 * with the group's name as the series label.
 */
import type { Point } from './queries.js';

export type Metric = 'requests' | 'tokens' | 'cost_usd';
export interface ChartSeries {
  name: string;
  label: string;
  color: string;
}
export type Row = Record<string, number | string>;

const COLORS = [
  'blue.6',
  'teal.6',
  'grape.6',
  'orange.6',
  'cyan.6',
  'pink.6',
  'lime.7',
  'indigo.6',
  'red.6',
  'yellow.7',
];

/** What the calls no key metered (agent turns of projects without a virtual key) are shown as. */
export const NO_KEY_LABEL = 'no key';

export function groupLabel(p: Point): string {
  if (p.virtual_key_id === null) return NO_KEY_LABEL;
  if (p.virtual_key_id !== undefined) return p.virtual_key_name ?? p.virtual_key_id;
  if (p.model !== undefined) return `${p.provider ?? '?'}/${p.model}`;
  if (p.provider !== undefined) return p.provider;
  return 'all';
}

export function value(p: Point, m: Metric): number {
  if (m === 'tokens') return (p.input_tokens ?? 0) + (p.output_tokens ?? 0);
  return p[m] ?? 0;
}

export function timeLabel(iso: string, bucket: 'hour' | 'day'): string {
  const d = new Date(iso);
  return bucket === 'hour'
    ? d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

export function toChart(
  points: Point[],
  metric: Metric,
  bucket: 'hour' | 'day',
): { data: Row[]; series: ChartSeries[] } {
  const names = new Map<string, string>();
  const rows = new Map<string, Row>();
  for (const p of points) {
    const label = groupLabel(p);
    if (!names.has(label)) names.set(label, `s${names.size}`);
    const at = p.bucket_start ?? '';
    const row = rows.get(at) ?? { time: timeLabel(at, bucket) };
    const key = names.get(label)!;
    row[key] = ((row[key] as number | undefined) ?? 0) + value(p, metric);
    rows.set(at, row);
  }
  const series = [...names].map(([label, name], i) => ({ name, label, color: COLORS[i % COLORS.length]! }));
  // Every row carries every series (0 where a group had no bucket) so stacks line up.
  const data = [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, r]) => ({ ...Object.fromEntries(series.map((s) => [s.name, 0])), ...r }));
  return { data, series };
}

/** Remaining budget after each bucket of the period, and the even burn line from max to zero at the period's end. */
export function burnDown(
  points: Point[],
  budget: { max_usd?: number; period_start?: string; period_end?: string | null },
  bucket: 'hour' | 'day',
): Row[] {
  const max = budget.max_usd ?? 0;
  const start = Date.parse(budget.period_start ?? '');
  const end = budget.period_end ? Date.parse(budget.period_end) : NaN;
  const perBucket = new Map<string, number>();
  for (const p of points)
    perBucket.set(p.bucket_start ?? '', (perBucket.get(p.bucket_start ?? '') ?? 0) + (p.cost_usd ?? 0));
  let spent = 0;
  const evenAt = (ms: number) =>
    Number.isFinite(end) && Number.isFinite(start) && end > start
      ? max * (1 - Math.min(1, Math.max(0, (ms - start) / (end - start))))
      : undefined;
  const rows: Row[] = [...perBucket.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([at, cost]) => {
      spent += cost;
      const row: Row = { time: timeLabel(at, bucket), remaining: Math.max(0, max - spent), spent };
      const even = evenAt(Date.parse(at));
      if (even !== undefined) row.even = even;
      return row;
    });
  // The rest of the period, so the chart spans all of it: only the even line there.
  const step = bucket === 'hour' ? 3600_000 : 24 * 3600_000;
  const last = [...perBucket.keys()].sort().at(-1);
  if (last && Number.isFinite(end))
    for (let t = Date.parse(last) + step; t < end && rows.length < 800; t += step)
      rows.push({ time: timeLabel(new Date(t).toISOString(), bucket), even: evenAt(t) ?? 0 });
  return rows;
}
