/**
 * METRICS_PER_KEY=true adds the virtual key id to the gateway's series; and
 * OTEL_SDK_DISABLED turns tracing off, not metrics (both need a process of
 * their own: tracing and metrics are set up once per process).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parsePrometheusText, sumOf } from '../helpers/prometheus-text.js';
import { openaiClient, startHarness, type Harness } from './gateway/gateway-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ METRICS_PER_KEY: 'true', OTEL_SDK_DISABLED: 'true' });
});
afterAll(() => h.close());

it('labels gateway series with the virtual key id, and still counts with tracing off', async () => {
  const chat = () =>
    openaiClient(h.api, h.secret).chat.completions.create({
      model: `${h.providers.openai.name}/gpt-4o-mini`,
      messages: [{ role: 'user', content: 'hi' }],
    });
  await chat();
  await chat();
  const res = await fetch(`${h.api.url}/metrics`);
  expect(res.status).toBe(200);
  const families = parsePrometheusText(await res.text());
  const key = { agent_server_virtual_key_id: h.keyId };
  expect(sumOf(families, 'agent_server_gateway_requests_total', key)).toBe(2);
  expect(sumOf(families, 'gen_ai_client_token_usage_sum', { ...key, gen_ai_token_type: 'input' })).toBe(22);
  expect(
    sumOf(families, 'http_server_request_duration_seconds_count', {
      http_route: '/api/gateway/openai/v1/chat/completions',
    }),
  ).toBe(2);
  // No spans, so no span export queue to report.
  expect(families.has('otel_sdk_processor_span_queue_size')).toBe(false);
});
