/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests:
 * it throws on anything Prometheus would refuse (bad names, bad escapes,
 * a family split in two, a TYPE after its samples, a duplicate series,
 * non-cumulative histogram buckets) and on anything a scraper would not
 * know how to read (a sample with no TYPE).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string | undefined;
  type: MetricType | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function fail(line: number, why: string): never {
  throw new Error(`line ${line}: ${why}`);
}

function parseValue(text: string, line: number): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail(line, `bad value "${text}"`);
  return Number(text);
}

/** `{a="x",b="y"}` starting at `i`; returns the labels and the index after `}`. */
function parseLabels(s: string, i: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  i++; // '{'
  for (;;) {
    if (s[i] === '}') return { labels, end: i + 1 };
    const eq = s.indexOf('=', i);
    if (eq < 0) fail(line, 'label without "="');
    const name = s.slice(i, eq);
    if (!LABEL_NAME.test(name)) fail(line, `bad label name "${name}"`);
    if (name in labels) fail(line, `label "${name}" twice`);
    if (s[eq + 1] !== '"') fail(line, `label "${name}" value not quoted`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = s[j];
      if (c === undefined) fail(line, 'unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const e = s[j + 1];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else fail(line, `bad escape "\\${e ?? ''}" in label "${name}"`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') fail(line, `expected "," or "}" after label "${name}"`);
  }
}

/** The family a sample name belongs to, given the family declared last. */
function familyOf(sample: string, current: Family | undefined): string {
  if (current?.type === 'histogram' || current?.type === 'summary') {
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (sample === current.name + suffix) return current.name;
    }
  }
  return sample;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: Family | undefined;
  const enter = (name: string, line: number): Family => {
    if (current?.name === name) return current;
    if (closed.has(name) || families.has(name)) fail(line, `family "${name}" is split`);
    if (current) closed.add(current.name);
    current = { name, help: undefined, type: undefined, samples: [] };
    families.set(name, current);
    return current;
  };
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the text does not end with a newline');
  lines.forEach((raw, index) => {
    const n = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(raw);
      if (!m) return; // a comment
      const [, kind, name, rest = ''] = m;
      if (!METRIC_NAME.test(name!)) fail(n, `bad metric name "${name}"`);
      const f = enter(name!, n);
      if (kind === 'HELP') {
        if (f.help !== undefined) fail(n, `second HELP for "${name}"`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) fail(n, `bad escape in HELP of "${name}"`);
        f.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
      } else {
        if (f.type !== undefined) fail(n, `second TYPE for "${name}"`);
        if (f.samples.length > 0) fail(n, `TYPE of "${name}" after its samples`);
        if (!TYPES.has(rest.trim())) fail(n, `bad TYPE "${rest}"`);
        f.type = rest.trim() as MetricType;
      }
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) fail(n, 'sample without a value');
    const name = raw.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) fail(n, `bad metric name "${name}"`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (raw[i] === '{') ({ labels, end: i } = parseLabels(raw, i, n));
    const rest = raw.slice(i).trim().split(/\s+/);
    if (raw[i] !== ' ' || rest.length < 1 || rest.length > 2) fail(n, 'expected " value [timestamp]"');
    const value = parseValue(rest[0]!, n);
    if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) fail(n, `bad timestamp "${rest[1]}"`);
    const f = enter(familyOf(name, current), n);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) fail(n, `duplicate series ${key}`);
    series.add(key);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Buckets cumulative, ending at le="+Inf", which equals _count. */
function checkHistogram(f: Family): void {
  const byLabels = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = byLabels.get(key) ?? { buckets: [] };
    byLabels.set(key, entry);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      entry.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
    } else if (s.name.endsWith('_count')) entry.count = s.value;
  }
  for (const [key, { buckets, count }] of byLabels) {
    buckets.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++)
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    const inf = buckets.at(-1);
    if (!inf || inf[0] !== Infinity) throw new Error(`${f.name}${key}: no le="+Inf" bucket`);
    if (count !== inf[1]) throw new Error(`${f.name}${key}: _count ${count} != +Inf bucket ${inf[1]}`);
  }
}

/** The sum of the samples named `name` whose labels include `match`. */
export function sumOf(
  families: Map<string, Family>,
  name: string,
  match: Record<string, string | undefined> = {},
): number {
  let total = 0;
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) total += s.value;
  return total;
}

/** Every sample of every family. */
export function allSamples(families: Map<string, Family>): Sample[] {
  return [...families.values()].flatMap((f) => f.samples);
}
