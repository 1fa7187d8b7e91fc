import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR, CONSOLE_CLIENT } from './attributes.js';
import { addBuckets, bucketIndex, type Buckets } from './rollup-histogram.js';
import { clean, hrTimeToMs, spanKindName } from './span-row.js';

/** What a rollup row is keyed by: everything the statistics endpoints filter or group on. */
export interface RollupKey {
  /** The start of the minute the span started in, in ms since the epoch. */
  minute: number;
  serviceName: string;
  spanName: string;
  spanKind: string;
  /** '' when the span names no project. */
  projectId: string;
  status: 'ok' | 'error';
  /** An entry span of its service (see `isEntrySpan`). */
  entry: boolean;
  /** Model calls only; '' otherwise. */
  provider: string;
  model: string;
  virtualKeyId: string;
  /** A span of the web console's own request (`agent_server.client=console`): left out of the statistics unless asked. */
  console: boolean;
}

export interface Observation {
  durationMs: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

export interface RollupCell extends RollupKey {
  count: number;
  sumMs: number;
  minMs: number;
  maxMs: number;
  buckets: Buckets;
  inputTokens: number;
  outputTokens: number;
  /** null while no span of the cell carried a cost. */
  costUsd: number | null;
}

/** The identity of a key, for the in-process map and for ordering upserts the same way on every replica. */
export const keyId = (k: RollupKey): string =>
  `${k.minute}\u0001${k.serviceName}\u0001${k.spanName}\u0001${k.spanKind}\u0001${k.projectId}\u0001` +
  `${k.status}\u0001${k.entry ? 1 : 0}\u0001${k.provider}\u0001${k.model}\u0001${k.virtualKeyId}\u0001` +
  `${k.console ? 1 : 0}`;

/**
 * Counts, latency and token sums per key, since the last drain. `add` is a map
 * lookup and a few additions: it runs for every span the process ends. A
 * burst of distinct keys beyond `maxCells` (a span name with an id in it) is
 * dropped and counted rather than growing without bound.
 */
export class RollupAggregator {
  private cells = new Map<string, RollupCell>();
  private droppedCount = 0;

  constructor(private readonly maxCells = 50_000) {}

  get size(): number {
    return this.cells.size;
  }

  /** Observations refused because the aggregator held `maxCells` keys. */
  get dropped(): number {
    return this.droppedCount;
  }

  add(key: RollupKey, o: Observation): void {
    const id = keyId(key);
    let c = this.cells.get(id);
    if (!c) {
      if (this.cells.size >= this.maxCells) {
        this.droppedCount++;
        return;
      }
      c = {
        ...key,
        count: 0,
        sumMs: 0,
        minMs: Infinity,
        maxMs: -Infinity,
        buckets: new Map(),
        inputTokens: 0,
        outputTokens: 0,
        costUsd: null,
      };
      this.cells.set(id, c);
    }
    const d = Number.isFinite(o.durationMs) && o.durationMs > 0 ? o.durationMs : 0;
    c.count++;
    c.sumMs += d;
    if (d < c.minMs) c.minMs = d;
    if (d > c.maxMs) c.maxMs = d;
    const b = bucketIndex(d);
    c.buckets.set(b, (c.buckets.get(b) ?? 0) + 1);
    if (o.inputTokens !== undefined) c.inputTokens += o.inputTokens;
    if (o.outputTokens !== undefined) c.outputTokens += o.outputTokens;
    if (o.costUsd !== undefined) c.costUsd = (c.costUsd ?? 0) + o.costUsd;
  }

  /** Adds a whole cell back (a flush that failed: its cells go with the next one). */
  merge(cell: RollupCell): void {
    const id = keyId(cell);
    const c = this.cells.get(id);
    if (!c) {
      this.cells.set(id, cell);
      return;
    }
    c.count += cell.count;
    c.sumMs += cell.sumMs;
    c.minMs = Math.min(c.minMs, cell.minMs);
    c.maxMs = Math.max(c.maxMs, cell.maxMs);
    addBuckets(c.buckets, cell.buckets);
    c.inputTokens += cell.inputTokens;
    c.outputTokens += cell.outputTokens;
    if (cell.costUsd !== null) c.costUsd = (c.costUsd ?? 0) + cell.costUsd;
  }

  /** Everything since the last drain; the aggregator starts empty again. */
  drain(): RollupCell[] {
    const out = [...this.cells.values()];
    this.cells = new Map();
    return out;
  }
}

/** Temporal's workflow spans that a caller outside the workflow starts: a run and its handlers. */
const WORKFLOW_ENTRY = /^(RunWorkflow|HandleUpdate|ValidateUpdate|HandleSignal|HandleQuery):/;

/**
 * An entry span of its service: where a request enters one of our services,
 * which is what `/stats/services` counts (so queries are not averaged with
 * requests). A span with no parent, or with a parent from another process (an
 * HTTP request with a caller's traceparent), is one; a span with a local
 * parent is not (the role router gives it its parent's service). Temporal's
 * spans say which they are by name: a workflow's run and handlers are entries
 * (the api started them), an activity run is not (its own workflow, in the
 * same service, scheduled it), nor is anything else inside a workflow.
 */
export function isEntrySpan(span: ReadableSpan, fromWorkflowSink: boolean): boolean {
  if (span.name.startsWith('RunActivity:')) return false;
  const parent = span.parentSpanContext;
  if (fromWorkflowSink) return !parent || WORKFLOW_ENTRY.test(span.name);
  return !parent || parent.isRemote === true;
}

const text = (v: unknown, max: number): string =>
  typeof v === 'string' && v.length > 0 ? clean(v.length > max ? v.slice(0, max) : v) : '';
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * A finished span's key and observation. Text is cut to a bounded length (it
 * is part of a btree key, and a span name with an id in it must not make one
 * huge row); token counts are whole numbers.
 */
export function rollupOf(span: ReadableSpan, fromWorkflowSink = false): [RollupKey, Observation] {
  const a = span.attributes;
  const startMs = hrTimeToMs(span.startTime);
  const service = span.resource?.attributes['service.name'];
  const model = span.kind === SpanKind.CLIENT ? text(a['gen_ai.request.model'], 128) : '';
  const key: RollupKey = {
    minute: Math.floor(startMs / 60_000) * 60_000,
    serviceName: typeof service === 'string' ? text(service, 128) : 'unknown_service',
    spanName: text(span.name, 256),
    spanKind: spanKindName(span.kind),
    projectId: text(a[ATTR.projectId], 64),
    status: span.status.code === SpanStatusCode.ERROR ? 'error' : 'ok',
    entry: isEntrySpan(span, fromWorkflowSink),
    provider: model ? text(a['gen_ai.provider.name'] ?? a['gen_ai.system'], 64) : '',
    model,
    virtualKeyId: model ? text(a[ATTR.virtualKeyId], 64) : '',
    console: a[ATTR.client] === CONSOLE_CLIENT,
  };
  const o: Observation = { durationMs: hrTimeToMs(span.duration) };
  if (model) {
    const input = num(a['gen_ai.usage.input_tokens']);
    const output = num(a['gen_ai.usage.output_tokens']);
    const cost = num(a[ATTR.costUsd]);
    if (input !== undefined) o.inputTokens = Math.round(input);
    if (output !== undefined) o.outputTokens = Math.round(output);
    if (cost !== undefined) o.costUsd = cost;
  }
  return [key, o];
}
