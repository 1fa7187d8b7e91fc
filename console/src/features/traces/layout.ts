import type { Span } from '../../api/types.js';

export interface Row {
  span: Span;
  depth: number;
  hasChildren: boolean;
  /** Milliseconds from the trace's first start. */
  offsetMs: number;
  durationMs: number;
}

export interface Layout {
  rows: Row[];
  startMs: number;
  totalMs: number;
}

const startOf = (s: Span) => Date.parse(s.start_time ?? '') || 0;
const durationOf = (s: Span) => Number(s.duration_ms ?? 0);

/**
 * Spans in tree order (depth first, children by start time) with their depth
 * and position; a span whose parent is not in the trace is a root. The
 * children of collapsed spans are left out.
 */
export function layoutSpans(spans: Span[], collapsed: ReadonlySet<string> = new Set()): Layout {
  if (!spans.length) return { rows: [], startMs: 0, totalMs: 0 };
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string, Span[]>();
  const roots: Span[] = [];
  for (const s of spans) {
    const parent = s.parent_span_id;
    if (parent && parent !== s.span_id && ids.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(s);
      children.set(parent, list);
    } else roots.push(s);
  }
  const byStart = (a: Span, b: Span) => startOf(a) - startOf(b);
  const startMs = Math.min(...spans.map(startOf));
  const endMs = Math.max(...spans.map((s) => startOf(s) + durationOf(s)));
  const rows: Row[] = [];
  const seen = new Set<string>();
  const visit = (s: Span, depth: number) => {
    const id = s.span_id ?? '';
    if (seen.has(id)) return; // a cycle in broken data must not hang the page
    seen.add(id);
    const kids = (children.get(id) ?? []).sort(byStart);
    rows.push({
      span: s,
      depth,
      hasChildren: kids.length > 0,
      offsetMs: startOf(s) - startMs,
      durationMs: durationOf(s),
    });
    if (!collapsed.has(id)) for (const k of kids) visit(k, depth + 1);
  };
  for (const r of roots.sort(byStart)) visit(r, 0);
  return { rows, startMs, totalMs: Math.max(endMs - startMs, 0.001) };
}

/** Tick positions for a time axis of `totalMs`: a 1, 2 or 5 × 10^k step giving at most `max` intervals. */
export function ticks(totalMs: number, max = 8): number[] {
  if (totalMs <= 0) return [0];
  const raw = totalMs / max;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = 0; t <= totalMs + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

const attrs = (s: Span) => (s.attributes ?? {}) as Record<string, unknown>;

/**
 * A database query or an outgoing HTTP request: plumbing beside the model
 * calls and tools of a turn. Model calls are CLIENT spans too, but carry the
 * GenAI attributes; the HTTP request a server answered (a SERVER span) stays.
 */
export function isPlumbing(s: Span): boolean {
  const a = attrs(s);
  if (a['db.system'] !== undefined || a['db.system.name'] !== undefined || s.name?.startsWith('pg.'))
    return true;
  if (s.kind !== 'CLIENT' || a['gen_ai.request.model'] !== undefined) return false;
  return a['http.request.method'] !== undefined || a['http.method'] !== undefined;
}

/**
 * The spans without those `fold` says to leave out; a span whose parent was
 * left out hangs under its nearest kept ancestor, so the tree stays whole.
 */
export function foldSpans(spans: Span[], fold: (s: Span) => boolean): Span[] {
  const byId = new Map(spans.map((s) => [s.span_id ?? '', s]));
  const folded = new Set(spans.filter(fold).map((s) => s.span_id ?? ''));
  if (!folded.size) return spans;
  const keptAncestor = (id: string | null | undefined): string | null => {
    for (let hops = 0; id && hops < 10_000; hops++) {
      if (!folded.has(id)) return id;
      id = byId.get(id)?.parent_span_id;
    }
    return null;
  };
  return spans
    .filter((s) => !folded.has(s.span_id ?? ''))
    .map((s) =>
      s.parent_span_id && folded.has(s.parent_span_id)
        ? { ...s, parent_span_id: keptAncestor(s.parent_span_id) }
        : s,
    );
}
