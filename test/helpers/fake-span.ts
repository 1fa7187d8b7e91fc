import { randomBytes } from 'node:crypto';
import {
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type HrTime,
  type SpanContext,
  type TraceState,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

export interface FakeSpanInit {
  name: string;
  durationMs: number;
  service?: string;
  kind?: SpanKind;
  error?: boolean;
  attributes?: Attributes;
  /** Start time, ms since the epoch; default a minute ago. */
  startMs?: number;
  traceId?: string;
  spanId?: string;
  traceState?: TraceState;
  parent?: { spanId: string; isRemote?: boolean };
}

const hr = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** A finished span in the SDK's shape, for what reads spans (rollups, the keeper) without a tracer. */
export function fakeSpan(s: FakeSpanInit): ReadableSpan {
  const start = s.startMs ?? Date.now() - 60_000;
  const sc: SpanContext = {
    traceId: s.traceId ?? randomBytes(16).toString('hex'),
    spanId: s.spanId ?? randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.SAMPLED,
    traceState: s.traceState,
  };
  return {
    name: s.name,
    kind: s.kind ?? SpanKind.SERVER,
    spanContext: () => sc,
    parentSpanContext: s.parent
      ? {
          traceId: sc.traceId,
          spanId: s.parent.spanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: s.parent.isRemote,
        }
      : undefined,
    startTime: hr(start),
    endTime: hr(start + s.durationMs),
    duration: hr(s.durationMs),
    status: { code: s.error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes: s.attributes ?? {},
    links: [],
    events: [],
    ended: true,
    resource: { attributes: { 'service.name': s.service ?? 'test-service' } },
    instrumentationScope: { name: 'test' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpan;
}
