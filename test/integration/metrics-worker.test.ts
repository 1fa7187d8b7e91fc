/**
 * The worker's own /metrics port (WORKER_METRICS_PORT): after real turns
 * against the scripted vendor, the session counters, turn and model-call
 * durations are there, exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, sumOf, type Family } from '../helpers/prometheus-text.js';
import { noTemporal } from '../helpers/services.js';
import { sessionEnv, startFixture, startInProcessWorker, type Fixture } from './sessions/session-harness.js';

const skip = noTemporal();

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(await res.text());
}

describe.skipIf(skip)('the worker’s metrics port', () => {
  let fx: Fixture;
  let worker: Awaited<ReturnType<typeof startInProcessWorker>>;
  let url: string;
  beforeAll(async () => {
    const env = sessionEnv({ WORKER_METRICS_PORT: '0' });
    fx = await startFixture(env);
    worker = await startInProcessWorker(env);
    url = worker.worker.metricsUrl!;
  });
  afterAll(async () => {
    await worker?.stop();
    await fx?.close();
  });

  it('is served when WORKER_METRICS_PORT is set', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  });

  it('counts turns started, completed and failed, their durations and their model calls', async () => {
    const before = await scrape(url);
    const agent = await fx.agent();
    fx.vendor.script({ reply: { text: 'fine', usage: { input: 7, output: 3 } } });
    const ok = await fx.converse({ agent_id: agent.id, message: 'hello', context: { role: 'x' } });
    expect(ok.body.data.status).toBe('completed');
    fx.vendor.script({ error: { status: 400, message: 'context too long' } });
    const bad = await fx.converse({ agent_id: agent.id, message: 'again', context: { role: 'x' } });
    expect(bad.body.data.status).toBe('failed');
    const after = await scrape(url);
    const rose = (name: string, match: Record<string, string | undefined> = {}) =>
      sumOf(after, name, match) - sumOf(before, name, match);

    expect(rose('agent_server_session_turns_started_total')).toBe(2);
    expect(rose('agent_server_session_turns_completed_total')).toBe(1);
    expect(rose('agent_server_session_turns_failed_total')).toBe(1);
    expect(rose('agent_server_session_turns_failed_total', { error_type: 'model_bad_request' })).toBe(1);
    const turns = 'agent_server_session_turn_duration_seconds_count';
    expect(rose(turns, { agent_server_turn_status: 'completed' })).toBe(1);
    expect(rose(turns, { agent_server_turn_status: 'failed' })).toBe(1);

    // The agent's model calls: GenAI client metrics with the configured model, no gateway surface.
    const calls = 'gen_ai_client_operation_duration_seconds_count';
    const model = { gen_ai_request_model: 'gpt-test', agent_server_gateway_surface: undefined };
    expect(rose(calls, { ...model, gen_ai_provider_name: 'openai' })).toBe(2);
    expect(rose(calls, { ...model, error_type: '400' })).toBe(1);
    expect(rose('gen_ai_client_token_usage_sum', { ...model, gen_ai_token_type: 'input' })).toBe(7);
    expect(rose('gen_ai_client_token_usage_sum', { ...model, gen_ai_token_type: 'output' })).toBe(3);

    // Read from PostgreSQL at each scrape; other test files share the database, so only its presence.
    expect(after.get('agent_server_session_approvals_pending')?.type).toBe('gauge');
    expect(after.get('agent_server_session_approvals_pending')!.samples).toHaveLength(1);
    expect(after.get('db_client_connection_count')?.samples.length).toBeGreaterThan(0);
  });

  it('answers only /metrics, and only to GET', async () => {
    expect((await fetch(url.replace('/metrics', '/health'))).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });
});

describe.skipIf(skip)('the worker’s metrics port with ADMIN_TOKEN set', () => {
  const token = 'worker-admin-token-0123456789';
  let worker: Awaited<ReturnType<typeof startInProcessWorker>>;
  let url: string;
  beforeAll(async () => {
    worker = await startInProcessWorker(sessionEnv({ WORKER_METRICS_PORT: '0', ADMIN_TOKEN: token }));
    url = worker.worker.metricsUrl!;
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('answers 401 without the token and the metrics with it', async () => {
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.text()).not.toContain('# TYPE');
    expect((await fetch(url, { headers: { authorization: 'Bearer not-the-token-0123' } })).status).toBe(401);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# TYPE');
  });
});
