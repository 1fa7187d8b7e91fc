/**
 * Every gateway answer says where its time went, in the standard
 * `Server-Timing` header: the upstream's share and the gateway's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './gateway-harness.js';

/** `gateway;dur=0.41, upstream;dur=12.8` → { gateway: 0.41, upstream: 12.8 }. */
function timings(header: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const m = /^\s*([a-z]+);dur=([\d.]+)\s*$/.exec(part);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

describe('Server-Timing on gateway answers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const call = (stream: boolean) =>
    fetch(`${h.api.url}/api/gateway/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.secret}` },
      body: JSON.stringify({
        model: `${h.providers.openai.name}/gpt-4o-mini`,
        messages: [{ role: 'user', content: 'hi' }],
        ...(stream ? { stream: true } : {}),
      }),
    });

  it.each([false, true])(
    'splits the time between the upstream and the gateway (stream: %s)',
    async (stream) => {
      // The upstream takes at least 150 ms before its first byte: its share says so, the gateway's does not.
      h.vendors.openai.script({ reply: { text: 'hello' }, firstByteDelayMs: 150 });
      const res = await call(stream);
      await res.text();
      expect(res.status).toBe(200);
      const t = timings(res.headers.get('server-timing'));
      expect(t.upstream).toBeGreaterThanOrEqual(150);
      expect(t.gateway).toBeGreaterThanOrEqual(0);
      expect(t.gateway).toBeLessThan(150);
    },
  );
});
