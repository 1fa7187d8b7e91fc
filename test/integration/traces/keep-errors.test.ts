/**
 * With the ratio at 0 nothing ordinary is stored, yet a failed request's
 * trace is, and a slow one's (TRACE_KEEP_SLOW_MS): the keep-or-drop decision
 * is taken when the request's root span ends. The statistics count all three.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startHarness, type Harness } from '../gateway/gateway-harness.js';
import { chatRequest } from '../gateway/raw-requests.js';

const CHAT = 'POST /api/gateway/openai/v1/chat/completions';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    OTEL_SERVICE_NAME: 'test-keep-errors',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    TRACE_KEEP_SLOW_MS: '700',
  });
});
afterAll(() => h.close());

async function storedNames(traceId: string): Promise<string[]> {
  await currentTelemetry()!.flush();
  const res = await h.api.request<{ spans: Array<{ name: string }> }>(
    'GET',
    `/api/agent-server/traces/${traceId}`,
  );
  return res.status === 200 ? res.body.data.spans.map((s) => s.name) : [];
}

describe('OTEL_TRACES_SAMPLER_ARG=0: errors and slow requests are stored all the same', () => {
  it('stores a failing request and a slow one, not an ordinary one; counts all three', async () => {
    const model = `${h.providers.openai.name}/m`;
    const ordinary = await chatRequest(h.api, 'openai', model, { secret: h.secret });
    expect(ordinary.status).toBe(200);

    h.vendors.openai.script({
      reply: { text: 'late', usage: { input: 1, output: 1 } },
      firstByteDelayMs: 900,
    });
    const slow = await chatRequest(h.api, 'openai', model, { secret: h.secret });
    expect(slow.status).toBe(200);

    // Every attempt fails (retries, no fallback): the gateway answers a server error.
    h.vendors.openai.script(
      ...Array.from({ length: 5 }, () => ({ error: { status: 500, message: 'boom' } })),
    );
    const failing = await chatRequest(h.api, 'openai', model, { secret: h.secret });
    expect(failing.status).toBeGreaterThanOrEqual(500);
    h.vendors.openai.reset();

    const [ordinaryId, slowId, failingId] = [ordinary, slow, failing].map((r) =>
      r.headers.get('x-trace-id')!,
    );
    expect(await storedNames(ordinaryId!)).toEqual([]);
    const slowSpans = await storedNames(slowId!);
    expect(slowSpans).toContain(CHAT);
    expect(slowSpans).toContain('chat m'); // the whole local trace, not the root alone
    const failingSpans = await storedNames(failingId!);
    expect(failingSpans).toContain(CHAT);
    expect(failingSpans).toContain('chat m');

    const stats = await h.api.request<Array<{ span_name: string; call_count: number; error_count: number }>>(
      'GET',
      '/api/agent-server/traces/stats/endpoints?service_name=test-keep-errors&span_kind=SERVER',
    );
    expect(stats.body.data.find((r) => r.span_name === CHAT)).toMatchObject({
      call_count: 3,
      error_count: 1,
    });

    // The sampling in force, as /health/ready shows it (when Temporal is up, as readiness needs).
    const inForce = {
      enabled: true,
      sampler: 'parentbased_traceidratio 0',
      sampling: {
        sampler: 'parentbased_traceidratio',
        ratio: 0,
        keep_slow_ms: 700,
        kept_for_error: 1,
        kept_for_slowness: 1,
      },
      rollups: { failed_flushes: 0 },
    };
    expect(currentTelemetry()!.stats()).toMatchObject(inForce);
    const ready = await h.api.request<{ telemetry: Record<string, unknown> }>(
      'GET',
      '/api/agent-server/health/ready',
    );
    if (ready.status === 200) expect(ready.body.data.telemetry).toMatchObject(inForce);
  });
});
