/**
 * `npx tsx bench/lib/heap-diff.ts early.heapsnapshot late.heapsnapshot [top]`:
 * object counts and self sizes by constructor (node type + name) in two heap
 * snapshots, sorted by growth. What a leak looks like: a constructor whose
 * count grows with the number of requests served between the snapshots.
 */
import { readFile } from 'node:fs/promises';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface Tally {
  count: number;
  size: number;
}

export async function tallyByConstructor(file: string): Promise<Map<string, Tally>> {
  const snap = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out = new Map<string, Tally>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const name = snap.strings[snap.nodes[i + nameAt]!]!;
    // Strings and code are grouped by type only: their "names" are their contents.
    const key = ['object', 'closure', 'native'].includes(type) ? `${type}:${name.slice(0, 80)}` : `(${type})`;
    const t = out.get(key) ?? { count: 0, size: 0 };
    t.count++;
    t.size += snap.nodes[i + sizeAt]!;
    out.set(key, t);
  }
  return out;
}

export function diff(a: Map<string, Tally>, b: Map<string, Tally>, top = 25) {
  const keys = new Set([...a.keys(), ...b.keys()]);
  const rows = [...keys].map((k) => {
    const x = a.get(k) ?? { count: 0, size: 0 };
    const y = b.get(k) ?? { count: 0, size: 0 };
    return {
      constructor: k,
      early: x.count,
      late: y.count,
      'Δ count': y.count - x.count,
      'Δ KiB': Math.round((y.size - x.size) / 1024),
    };
  });
  const total = (m: Map<string, Tally>) =>
    [...m.values()].reduce((s, t) => ({ count: s.count + t.count, size: s.size + t.size }), {
      count: 0,
      size: 0,
    });
  return {
    early: total(a),
    late: total(b),
    byCount: [...rows].sort((p, q) => Math.abs(q['Δ count']) - Math.abs(p['Δ count'])).slice(0, top),
    bySize: [...rows].sort((p, q) => Math.abs(q['Δ KiB']) - Math.abs(p['Δ KiB'])).slice(0, top),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [early, late, top] = process.argv.slice(2);
  if (!early || !late) throw new Error('usage: heap-diff.ts early.heapsnapshot late.heapsnapshot [top]');
  const d = diff(await tallyByConstructor(early), await tallyByConstructor(late), Number(top ?? 25));
  console.log(
    `objects ${d.early.count} → ${d.late.count}; self size ${(d.early.size / 2 ** 20).toFixed(1)} → ${(d.late.size / 2 ** 20).toFixed(1)} MiB`,
  );
  console.log('largest changes in count:');
  console.table(d.byCount);
  console.log('largest changes in size:');
  console.table(d.bySize);
}
