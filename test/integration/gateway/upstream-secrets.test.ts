/**
 * A vendor (or a proxy in front of it) that repeats the
 * credential it received in its error body must not hand our provider key to
 * the gateway's caller, nor leave it in the stored spans or the logs. The
 * keys here match no known key format, so only redaction by value (the key
 * we sent) can find them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { createProvider, createVirtualKey, type ProviderData } from '../../helpers/factories/config.js';
import { databaseUrl } from '../../helpers/services.js';
import { FORMATS, startHarness, type Format, type Harness } from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

const ECHOED = ['authorization', 'x-api-key', 'x-goog-api-key', 'x-proxy-token'];
const opaque = () => `q${randomBytes(20).toString('hex')}`;

let h: Harness;
let db: Db;
const providers = {} as Record<Format, ProviderData>;
const keys = {} as Record<Format, { apiKey: string; proxyToken: string }>;
let secret: string;

beforeAll(async () => {
  h = await startHarness();
  db = createDb(databaseUrl());
  for (const f of FORMATS) {
    keys[f] = { apiKey: opaque(), proxyToken: opaque() };
    providers[f] = await createProvider(h.api, {
      provider_type: f,
      base_url: f === 'openai' ? `${h.vendors[f].url}/v1` : h.vendors[f].url,
      api_key: keys[f].apiKey,
      headers: { 'X-Proxy-Token': keys[f].proxyToken, 'X-Team': 'blue' },
    });
  }
  const key = await createVirtualKey(h.api, {
    providers: FORMATS.map((f) => ({ provider_id: providers[f].id, model_names: ['*'] })),
  });
  secret = key.secret_key!;
});
afterAll(async () => {
  await h?.close();
  await db?.destroy();
});

async function storedSpans(traceId: string): Promise<string> {
  await currentTelemetry()!.flush();
  const rows = await db('spans')
    .where({ trace_id: traceId })
    .select(db.raw('name, status_message, attributes::text as attributes, events::text as events'));
  return JSON.stringify(rows);
}

describe.each(FORMATS)('a %s vendor that echoes our credentials in its error', (f) => {
  it.each([401, 500])('%i: the caller, the spans and the logs do not get them', async (status) => {
    const vendor = h.vendors[f];
    vendor.reset();
    // 500 is retried: every attempt fails the same way.
    vendor.script(...Array.from({ length: 5 }, () => ({ error: { status, echoHeaders: ECHOED } })));
    const logStart = h.api.logs.lines.length;
    const res = await chatRequest(h.api, f, `${providers[f].name}/m`, { secret });
    const text = await res.text();
    vendor.reset();

    expect(res.status).toBeGreaterThanOrEqual(500);
    const message = expectShape(f, JSON.parse(text));
    // The vendor's own words still reach the caller; only the credentials are gone.
    expect(message).toContain(`scripted ${status}`);
    expect(message).toContain('[redacted]');
    const { apiKey, proxyToken } = keys[f];
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(proxyToken);

    const stored = await storedSpans(res.headers.get('x-trace-id')!);
    expect(stored).toContain(`scripted ${status}`);
    expect(stored).not.toContain(apiKey);
    expect(stored).not.toContain(proxyToken);

    const logs = h.api.logs.lines.slice(logStart).join('\n');
    expect(logs).not.toContain(apiKey);
    expect(logs).not.toContain(proxyToken);
  });
});
