/**
 * A Gemini-surface call authenticated with `?key=<virtual
 * key>` must leave the key nowhere we record things: not in the trace the API
 * returns, not in the `spans` table (read directly), not in the logs — for an
 * admitted call and for a refused one alike. The query is still recorded,
 * with the credential's value replaced.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { databaseUrl } from '../../helpers/services.js';
import { startHarness, type Harness } from '../gateway/gateway-harness.js';

let h: Harness;
let db: Db;
beforeAll(async () => {
  h = await startHarness();
  db = createDb(databaseUrl());
});
afterAll(async () => {
  await h?.close();
  await db?.destroy();
});

/** Every stored column of the trace's spans, as text. */
async function storedSpans(traceId: string): Promise<string> {
  await currentTelemetry()!.flush();
  const rows = await db('spans')
    .where({ trace_id: traceId })
    .select(db.raw('name, status_message, attributes::text as attributes, events::text as events'));
  expect(rows.length).toBeGreaterThan(0);
  return JSON.stringify(rows);
}

function geminiCall(key: string): Promise<Response> {
  const model = `${h.providers.gemini.name}/m`;
  return fetch(
    `${h.api.url}/api/gateway/gemini/v1beta/models/${model}:generateContent?alt=json&key=${encodeURIComponent(key)}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    },
  );
}

describe('a virtual key passed as ?key= is not recorded', () => {
  it.each([
    ['an admitted call', () => h.secret, 200],
    // Not shaped like any known key format: only the parameter's name can tell it is a credential.
    ['a refused call', () => `wrong${randomBytes(16).toString('hex')}`, 401],
  ])('%s', async (_what, keyOf, status) => {
    const key = keyOf();
    const logStart = h.api.logs.lines.length;
    const res = await geminiCall(key);
    expect(res.status).toBe(status);
    const traceId = res.headers.get('x-trace-id')!;

    const stored = await storedSpans(traceId);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(encodeURIComponent(key));

    const trace = await h.api.request<{
      spans: Array<{ kind: string; attributes: Record<string, unknown> }>;
    }>('GET', `/api/agent-server/traces/${traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.text).not.toContain(key);
    // The query is still there to read, its credential replaced.
    const server = trace.body.data.spans.find((s) => s.kind === 'SERVER');
    expect(server?.attributes['url.query']).toBe('alt=json&key=[redacted]');

    const logs = h.api.logs.lines.slice(logStart).join('\n');
    expect(logs).not.toContain(key);
  });
});
