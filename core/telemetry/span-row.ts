import { SpanKind, SpanStatusCode, type Attributes, type HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR } from './attributes.js';

/** One row of the `spans` table (migrations/20261122000020_spans.ts). */
export interface SpanRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  scope_name: string | null;
  start_time: string;
  end_time: string;
  duration_ms: number;
  status_code: string;
  status_message: string | null;
  attributes: Attributes;
  events: Array<{ name: string; time: string; attributes: Attributes }>;
  project_id: string | null;
  agent_id: string | null;
  conversation_id: string | null;
}

/**
 * Workflow spans arrive through Temporal's sink in the shape of OpenTelemetry
 * JS 1.x (`parentSpanId`, `instrumentationLibrary`); everything else is 2.x+.
 */
export type AnyReadableSpan = ReadableSpan & {
  parentSpanId?: string;
  instrumentationLibrary?: { name: string };
};

const KINDS: Record<number, string> = {
  [SpanKind.INTERNAL]: 'INTERNAL',
  [SpanKind.SERVER]: 'SERVER',
  [SpanKind.CLIENT]: 'CLIENT',
  [SpanKind.PRODUCER]: 'PRODUCER',
  [SpanKind.CONSUMER]: 'CONSUMER',
};
const STATUSES: Record<number, string> = {
  [SpanStatusCode.UNSET]: 'UNSET',
  [SpanStatusCode.OK]: 'OK',
  [SpanStatusCode.ERROR]: 'ERROR',
};

/** Postgres text and jsonb refuse NUL characters; a span must never fail its whole batch for one. */
export const clean = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s);

/** The stored name of a span kind (`SERVER`, `CLIENT`…). */
export const spanKindName = (kind: SpanKind): string => KINDS[kind] ?? 'INTERNAL';

/** `YYYY-MM-DDTHH:MM:SS` of the last second formatted: spans ending in the same second share it. */
let isoSecond = -1;
let isoPrefix = '';

/**
 * ISO 8601 with microseconds (timestamptz keeps them, and sub-millisecond
 * spans are common), without a Date per call: it runs twice for every span.
 */
export function hrTimeToIso(t: HrTime): string {
  const seconds = t[0] + Math.floor(t[1] / 1e9);
  if (seconds !== isoSecond) {
    isoSecond = seconds;
    isoPrefix = new Date(seconds * 1000).toISOString().slice(0, 19);
  }
  return `${isoPrefix}.${String(Math.floor((t[1] % 1e9) / 1e3)).padStart(6, '0')}Z`;
}

export const hrTimeToMs = (t: HrTime) => t[0] * 1e3 + t[1] / 1e6;

/** JSON would carry a NUL as `\u0000`, which jsonb refuses just the same: clean the strings first. */
function cleanAttributes(attributes: Attributes): Attributes {
  let out: Attributes | undefined;
  for (const [key, value] of Object.entries(attributes)) {
    const cleaned =
      typeof value === 'string'
        ? clean(value)
        : Array.isArray(value) && value.some((v) => typeof v === 'string' && v.includes('\u0000'))
          ? (value as unknown[]).map((v) => (typeof v === 'string' ? clean(v) : v))
          : value;
    if (cleaned !== value || key.includes('\u0000')) {
      out ??= { ...attributes };
      if (key.includes('\u0000')) delete out[key];
      out[clean(key)] = cleaned;
    }
  }
  return out ?? attributes;
}

function idAttr(attributes: Attributes, key: string): string | null {
  const v = attributes[key];
  return typeof v === 'string' && v.length > 0 && v.length <= 200 ? clean(v) : null;
}

export function toSpanRow(span: AnyReadableSpan): SpanRow {
  const sc = span.spanContext();
  const attributes = span.attributes;
  const serviceName = span.resource?.attributes['service.name'];
  return {
    trace_id: sc.traceId,
    span_id: sc.spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? span.parentSpanId ?? null,
    name: clean(span.name),
    kind: KINDS[span.kind] ?? 'INTERNAL',
    service_name: typeof serviceName === 'string' ? clean(serviceName) : 'unknown_service',
    scope_name: span.instrumentationScope?.name ?? span.instrumentationLibrary?.name ?? null,
    start_time: hrTimeToIso(span.startTime),
    end_time: hrTimeToIso(span.endTime),
    duration_ms: Math.max(0, hrTimeToMs(span.duration)),
    status_code: STATUSES[span.status.code] ?? 'UNSET',
    status_message: span.status.message ? clean(span.status.message) : null,
    attributes: cleanAttributes(attributes),
    events: span.events.map((e) => ({
      name: clean(e.name),
      time: hrTimeToIso(e.time),
      attributes: cleanAttributes(e.attributes ?? {}),
    })),
    project_id: idAttr(attributes, ATTR.projectId),
    agent_id: idAttr(attributes, ATTR.agentId),
    conversation_id: idAttr(attributes, ATTR.conversationId),
  };
}

/** The `spans` columns in the order of `spanToCopyLine`'s fields. */
export const SPAN_COLUMNS = [
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'service_name',
  'scope_name',
  'start_time',
  'end_time',
  'duration_ms',
  'status_code',
  'status_message',
  'attributes',
  'events',
  'project_id',
  'agent_id',
  'conversation_id',
] as const;

/** What COPY's text format must escape in a field; NUL, which Postgres text refuses, is replaced. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const COPY_SPECIAL = /[\\\t\n\r\u0000]/;
// eslint-disable-next-line no-control-regex -- as above
const COPY_SPECIAL_ALL = /[\\\t\n\r\u0000]/g;
const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\u0000': '\uFFFD',
};

/** A text field of a COPY line (`\N` for null). */
export function copyText(s: string | null | undefined): string {
  if (s === null || s === undefined) return '\\N';
  return COPY_SPECIAL.test(s) ? s.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c]!) : s;
}

/**
 * JSON for a json field. JSON.stringify escapes control characters, so only
 * its backslashes need COPY's escaping. The columns are json (migration
 * 20261123000110), which would take any escape, but reads cast them to jsonb
 * (model statistics, and `down`), and jsonb refuses the escapes of NUL
 * and of lone surrogates, which are the only `\u` escapes JSON.stringify
 * writes besides other control characters: when one shows, the strings are
 * cleaned first.
 */
function copyJson(value: Attributes | unknown[]): string {
  let json = JSON.stringify(value);
  if (json.includes('\\u')) json = JSON.stringify(deepClean(value));
  return json.includes('\\') ? json.replaceAll('\\', '\\\\') : json;
}

function deepClean(value: unknown): unknown {
  if (typeof value === 'string') return clean(value).toWellFormed();
  if (Array.isArray(value)) return value.map(deepClean);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [deepClean(k), deepClean(v)]));
  return value;
}

/** Lines are encoded one after another into chunks of this size (a larger line gets a buffer of its own). */
const CHUNK_SIZE = 64 * 1024;
let chunk = Buffer.allocUnsafeSlow(CHUNK_SIZE);
let chunkUsed = 0;

/**
 * A span as one line of `COPY spans (SPAN_COLUMNS) FROM STDIN` (text format),
 * UTF-8 encoded when the span ends: the Postgres queue holds views of a few
 * shared chunks, not span trees, and Postgres parses no JSON envelope around
 * the row (~35% less Postgres CPU per span than the insert from
 * json_to_recordset it replaced, bench/traces/span-store.bench.ts). Lines
 * ending one after another lie side by side in a chunk, so a batch goes to
 * the socket as a few large writes with nothing joined or copied: joining a
 * batch's lines into one string cost ~4 µs per span on the main thread
 * (bench/traces/span-export.bench.ts). A chunk is only ever appended to, so
 * a view stays valid for as long as it is held.
 */
export function spanToCopyLine(span: AnyReadableSpan): Buffer {
  const text = spanToCopyText(span);
  const most = text.length * 3; // UTF-8 bytes per UTF-16 unit, at most
  if (most > CHUNK_SIZE / 4) return Buffer.from(text);
  if (chunkUsed + most > CHUNK_SIZE) {
    chunk = Buffer.allocUnsafeSlow(CHUNK_SIZE);
    chunkUsed = 0;
  }
  const start = chunkUsed;
  chunkUsed += chunk.write(text, start);
  return chunk.subarray(start, chunkUsed);
}

/**
 * The batch's lines as few buffers: views that lie side by side in the same
 * chunk become one view (no bytes are copied).
 */
export function coalesceLines(lines: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer | undefined;
  let runEnd = 0;
  for (const line of lines) {
    if (run && line.buffer === run.buffer && line.byteOffset === runEnd) {
      runEnd += line.byteLength;
      continue;
    }
    if (run) out.push(Buffer.from(run.buffer, run.byteOffset, runEnd - run.byteOffset));
    run = line;
    runEnd = line.byteOffset + line.byteLength;
  }
  if (run) out.push(Buffer.from(run.buffer, run.byteOffset, runEnd - run.byteOffset));
  return out;
}

/** The line itself, as a string. */
export function spanToCopyText(span: AnyReadableSpan): string {
  const sc = span.spanContext();
  const attributes = span.attributes;
  const serviceName = span.resource?.attributes['service.name'];
  const scope = span.instrumentationScope?.name ?? span.instrumentationLibrary?.name;
  const events =
    span.events.length === 0
      ? '[]'
      : copyJson(
          span.events.map((e) => ({
            name: e.name,
            time: hrTimeToIso(e.time),
            attributes: e.attributes ?? {},
          })),
        );
  return (
    `${sc.traceId}\t${sc.spanId}\t${copyText(span.parentSpanContext?.spanId ?? span.parentSpanId)}` +
    `\t${copyText(span.name)}\t${KINDS[span.kind] ?? 'INTERNAL'}` +
    `\t${typeof serviceName === 'string' ? copyText(serviceName) : 'unknown_service'}\t${copyText(scope)}` +
    `\t${hrTimeToIso(span.startTime)}\t${hrTimeToIso(span.endTime)}` +
    `\t${Math.max(0, hrTimeToMs(span.duration))}\t${STATUSES[span.status.code] ?? 'UNSET'}` +
    `\t${copyText(span.status.message || null)}\t${copyJson(attributes)}\t${events}` +
    `\t${copyText(idAttr(attributes, ATTR.projectId))}\t${copyText(idAttr(attributes, ATTR.agentId))}` +
    `\t${copyText(idAttr(attributes, ATTR.conversationId))}\n`
  );
}
