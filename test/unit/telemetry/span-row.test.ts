import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { routeTemplate } from '../../../api/middleware/tracing.js';
import { hrTimeToIso, toSpanRow, type AnyReadableSpan } from '../../../api/telemetry/span-row.js';

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
});
