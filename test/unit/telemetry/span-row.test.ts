import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { routeTemplate } from '../../../api/middleware/tracing.js';
import {
  coalesceLines,
  hrTimeToIso,
  spanToCopyLine,
  spanToCopyText,
  toSpanRow,
  type AnyReadableSpan,
} from '../../../core/telemetry/span-row.js';

describe('span rows', () => {
  it('keeps microseconds, reads the 1.x parent shape of workflow spans, and strips NULs', () => {
    expect(hrTimeToIso([1_700_000_000, 123_456_789])).toBe('2023-11-14T22:13:20.123456Z');
    const span = {
      name: 'RunWorkflow:x\u0000',
      kind: SpanKind.INTERNAL,
      spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
      parentSpanId: 'c'.repeat(16),
      startTime: [10, 0],
      endTime: [10, 2_500_000],
      duration: [0, 2_500_000],
      status: { code: SpanStatusCode.ERROR, message: 'boom' },
      attributes: { 'gen_ai.agent.id': 'agent-7', note: 'x\u0000y' },
      events: [],
      resource: { attributes: { 'service.name': 'agent-server-worker' } },
      instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
    } as unknown as AnyReadableSpan;
    expect(toSpanRow(span)).toMatchObject({
      parent_span_id: 'c'.repeat(16),
      name: 'RunWorkflow:x\uFFFD',
      kind: 'INTERNAL',
      service_name: 'agent-server-worker',
      scope_name: '@temporalio/interceptor-workflow',
      duration_ms: 2.5,
      status_code: 'ERROR',
      status_message: 'boom',
      agent_id: 'agent-7',
      project_id: null,
      attributes: { 'gen_ai.agent.id': 'agent-7', note: 'x\uFFFDy' },
    });
  });

  it('turns Koa route paths into OpenAPI templates', () => {
    expect(routeTemplate('/api/agent-server/agents/:id')).toBe('/api/agent-server/agents/{id}');
    expect(routeTemplate('/p/:name/versions/:version(\\d+)')).toBe('/p/{name}/versions/{version}');
  });

  it('encodes lines side by side in shared chunks, whole after a chunk fills, and joins a batch without copying', () => {
    const span = (name: string, note: string) =>
      ({
        name,
        kind: SpanKind.SERVER,
        spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
        startTime: [10, 0],
        endTime: [10, 1_000],
        duration: [0, 1_000],
        status: { code: SpanStatusCode.UNSET },
        attributes: { note },
        events: [],
        resource: { attributes: { 'service.name': 'agent-server-api' } },
        instrumentationScope: { name: 'agent-server-http' },
      }) as unknown as AnyReadableSpan;
    // ~300 KB of lines: several chunks fill; non-ASCII text takes more bytes than characters.
    const spans = Array.from({ length: 600 }, (_, i) => span(`GET /x/${i}`, `é€😀 ${'n'.repeat(i % 500)}`));
    const lines = spans.map(spanToCopyLine);
    // A line far larger than a chunk gets a buffer of its own.
    const big = span('big', 'x'.repeat(100_000));
    lines.splice(300, 0, spanToCopyLine(big));
    spans.splice(300, 0, big);
    lines.forEach((line, i) => expect(line.toString('utf8')).toBe(spanToCopyText(spans[i]!)));
    const parts = coalesceLines(lines);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.length).toBeLessThan(20);
    expect(Buffer.concat(parts).toString('utf8')).toBe(spans.map(spanToCopyText).join(''));
  });
});
