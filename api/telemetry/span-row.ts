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
const clean = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s);

/** ISO 8601 with microseconds: timestamptz keeps them, and sub-millisecond spans are common. */
export function hrTimeToIso(t: HrTime): string {
  const ms = t[0] * 1000 + Math.floor(t[1] / 1e6);
  const micros = Math.floor((t[1] % 1e6) / 1e3);
  return new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}

export const hrTimeToMs = (t: HrTime) => t[0] * 1e3 + t[1] / 1e6;

/** Microseconds since the epoch; exact (below 2^53) until the year 2255. */
export const hrTimeToMicros = (t: HrTime) => t[0] * 1e6 + Math.floor(t[1] / 1e3);

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

/**
 * The wire form of a `spans` row, as the Postgres exporter queues and sends
 * it: short keys, absent instead of null, times as epoch microseconds (the
 * insert turns them into timestamptz). A third fewer bytes than the row's own
 * JSON and no date formatting: the API writes every byte to the socket and
 * Postgres parses it, for every span. `SPAN_WIRE_INSERT` reads this form.
 */
export function spanToWireJson(span: AnyReadableSpan): string {
  // Almost no span carries a NUL: serialise as is, and clean only when the JSON shows one.
  const json = JSON.stringify(
    wireRow(
      span,
      (x) => x,
      (a) => a,
    ),
  );
  return json.includes('\\u0000') ? JSON.stringify(wireRow(span, clean, cleanAttributes)) : json;
}

function wireRow(
  span: AnyReadableSpan,
  text: (s: string) => string,
  attrs: (a: Attributes) => Attributes,
): Record<string, unknown> {
  const sc = span.spanContext();
  const attributes = span.attributes;
  const w: Record<string, unknown> = { t: sc.traceId, s: sc.spanId };
  const parent = span.parentSpanContext?.spanId ?? span.parentSpanId;
  if (parent) w.p = parent;
  w.n = text(span.name);
  w.k = KINDS[span.kind] ?? 'INTERNAL';
  const serviceName = span.resource?.attributes['service.name'];
  w.sv = typeof serviceName === 'string' ? text(serviceName) : 'unknown_service';
  const scope = span.instrumentationScope?.name ?? span.instrumentationLibrary?.name;
  if (scope) w.sc = text(scope);
  w.st = hrTimeToMicros(span.startTime);
  w.et = hrTimeToMicros(span.endTime);
  w.d = Math.max(0, hrTimeToMs(span.duration));
  w.c = STATUSES[span.status.code] ?? 'UNSET';
  if (span.status.message) w.m = text(span.status.message);
  w.a = attrs(attributes);
  if (span.events.length > 0) {
    w.e = span.events.map((e) => ({
      name: text(e.name),
      time: hrTimeToIso(e.time),
      attributes: attrs(e.attributes ?? {}),
    }));
  }
  const project = idAttr(attributes, ATTR.projectId);
  if (project) w.pr = project;
  const agent = idAttr(attributes, ATTR.agentId);
  if (agent) w.ag = agent;
  const conversation = idAttr(attributes, ATTR.conversationId);
  if (conversation) w.cv = conversation;
  return w;
}

/**
 * Inserts a JSON array of `spanToWireJson` rows ($1). `json`, not `jsonb`:
 * the array is read once, row by row, rather than first built into one jsonb
 * value (measured: ~25% less Postgres CPU per span with the shorter rows).
 * A span seen twice (an export retried after a timeout) is ignored.
 */
export const SPAN_WIRE_INSERT = `
  insert into spans (trace_id, span_id, parent_span_id, name, kind, service_name, scope_name,
                     start_time, end_time, duration_ms, status_code, status_message,
                     attributes, events, project_id, agent_id, conversation_id)
  select t, s, p, n, k, sv, sc,
         timestamptz 'epoch' + st * interval '1 microsecond',
         timestamptz 'epoch' + et * interval '1 microsecond',
         d, c, m, coalesce(a, '{}'), coalesce(e, '[]'), pr, ag, cv
    from json_to_recordset(?::json) as r(t text, s text, p text, n text, k text, sv text, sc text,
                                         st bigint, et bigint, d float8, c text, m text,
                                         a jsonb, e jsonb, pr text, ag text, cv text)
  on conflict (trace_id, span_id) do nothing`;
