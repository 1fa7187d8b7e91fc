/**
 * Where a CPU profile's time went (V8 .cpuprofile, sampled): self time by
 * part of the stack (our door, our other API code, Knex, pg, Koa, tracing…)
 * and by function, so two doors' profiles over the same number of turns can
 * be compared per turn.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: Array<[string, (url: string) => boolean]> = [
  ['api/protocols/langgraph (the door)', (u) => u.includes('/api/protocols/langgraph/')],
  ['api/ (routes, services, middleware)', (u) => /\/api\//.test(u) && !u.includes('node_modules')],
  ['core/ (repositories, telemetry…)', (u) => /\/core\//.test(u) && !u.includes('node_modules')],
  ['knex', (u) => u.includes('node_modules/knex/')],
  ['pg, pg-protocol', (u) => /node_modules\/pg(-[a-z]+)?\//.test(u)],
  ['koa and its middleware', (u) => /node_modules\/(@koa\/|koa)/.test(u)],
  ['@opentelemetry', (u) => u.includes('node_modules/@opentelemetry/')],
  ['@temporalio, grpc', (u) => /node_modules\/(@temporalio|@grpc)\//.test(u)],
  ['joi', (u) => u.includes('node_modules/joi/')],
  ['other packages', (u) => u.includes('node_modules/')],
  ['node: built-ins', (u) => u.startsWith('node:')],
];

/** A frame's part of the stack: a group above, or V8's own entries (GC, program), or "other". */
function groupOf(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  return GROUPS.find(([, test]) => test(frame.url))?.[0] ?? 'other';
}

export interface ProfileTotals {
  /** Milliseconds of self time by group (idle left out). */
  groups: Map<string, number>;
  /** Milliseconds of self time by function (`name file:line`). */
  functions: Map<string, number>;
  busyMs: number;
}

export function summarize(file: string): ProfileTotals {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const shortUrl = (f: ProfileNode['callFrame']) =>
    `${f.url.replace(/^.*?\/(node_modules|api|core)\//, '$1/')}:${f.lineNumber + 1}`;
  /** A native function (a system call such as `writev`) is named with its nearest caller outside Node's own code. */
  const callerOf = (id: number): string => {
    for (let at = parentOf.get(id); at !== undefined; at = parentOf.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (f.url && !f.url.startsWith('node:')) return `← ${f.functionName || '(anonymous)'} ${shortUrl(f)}`;
    }
    return '';
  };
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let busyMs = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    busyMs += ms;
    const group = groupOf(frame);
    groups.set(group, (groups.get(group) ?? 0) + ms);
    const where = frame.url ? shortUrl(frame) : group === '(native)' ? callerOf(id) : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + ms);
  });
  return { groups, functions, busyMs };
}

/** Two profiles' totals as one (the same door profiled twice, in two places of the order). */
export function merge(a: ProfileTotals, b: ProfileTotals): ProfileTotals {
  const add = (x: Map<string, number>, y: Map<string, number>) => {
    const out = new Map(x);
    for (const [k, v] of y) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  };
  return {
    groups: add(a.groups, b.groups),
    functions: add(a.functions, b.functions),
    busyMs: a.busyMs + b.busyMs,
  };
}

/** Per-turn self time of `a` against `b` by group, and the functions where `a` spends most beyond `b`. */
export function compare(
  a: ProfileTotals,
  aTurns: number,
  b: ProfileTotals,
  bTurns: number,
  top = 15,
): string {
  const lines: string[] = [];
  const per = (m: Map<string, number>, k: string, n: number) => (m.get(k) ?? 0) / n;
  const f = (x: number) => x.toFixed(3).padStart(7);
  lines.push(
    `${'part of the stack'.padEnd(40)} ${'A ms/turn'.padStart(9)} ${'B ms/turn'.padStart(9)} ${'A − B'.padStart(7)}`,
  );
  const keys = [...new Set([...a.groups.keys(), ...b.groups.keys()])].sort(
    (x, y) => per(a.groups, y, aTurns) - per(a.groups, x, aTurns),
  );
  for (const k of keys) {
    const pa = per(a.groups, k, aTurns);
    const pb = per(b.groups, k, bTurns);
    lines.push(`${k.padEnd(40)} ${f(pa).padStart(9)} ${f(pb).padStart(9)} ${f(pa - pb)}`);
  }
  lines.push(
    `${'total (busy)'.padEnd(40)} ${f(a.busyMs / aTurns).padStart(9)} ${f(b.busyMs / bTurns).padStart(9)} ${f(a.busyMs / aTurns - b.busyMs / bTurns)}`,
  );
  lines.push('', `functions with the most self time in A beyond B (ms/turn):`);
  const fkeys = [...new Set([...a.functions.keys(), ...b.functions.keys()])]
    .map((k) => [k, per(a.functions, k, aTurns) - per(b.functions, k, bTurns)] as const)
    .sort((x, y) => y[1] - x[1])
    .slice(0, top);
  for (const [k, d] of fkeys) lines.push(`  ${f(d)}  ${k}`);
  return lines.join('\n');
}
