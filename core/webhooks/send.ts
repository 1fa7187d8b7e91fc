/**
 * One attempt at sending a delivery: a POST through the egress policy (the
 * same connector as provider and MCP calls), no redirect followed. Only a
 * 2xx acknowledges; anything else, or no answer, is a failed attempt that
 * says why (a refused destination: `egress_denied: …`).
 */
import { request } from 'undici';
import type { WebhookAttempt } from '../db/tables/index.js';
import { egressAgent } from '../security/egress-agent.js';
import { findEgressDenial } from '../security/egress-policy.js';

/** What an attempt's error says: short, and never a header or the body. */
function describe(err: unknown, timedOut: boolean): string {
  const denied = findEgressDenial(err);
  if (denied) return `egress_denied: ${denied.message}`;
  if (timedOut) return 'timeout';
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  const code = e.code ?? e.cause?.code;
  return code ? `connection_failed: ${code}` : `connection_failed: ${e.message ?? 'unknown error'}`;
}

export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<WebhookAttempt> {
  const at = new Date();
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const duration = () => Math.round(performance.now() - started);
  try {
    const res = await request(url, {
      method: 'POST',
      // The caller's content type wins (an A2A push is application/a2a+json).
      headers: { 'content-type': 'application/json', 'user-agent': 'agent-server-webhooks', ...headers },
      body,
      signal,
      dispatcher: egressAgent(Math.min(timeoutMs, 10_000)),
    });
    // The answer's body is not kept: only whether it was acknowledged.
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return {
      at: at.toISOString(),
      status_code: res.statusCode,
      error: ok ? null : `HTTP ${res.statusCode}`,
      duration_ms: duration(),
    };
  } catch (err) {
    return {
      at: at.toISOString(),
      status_code: null,
      error: describe(err, signal.aborted),
      duration_ms: duration(),
    };
  }
}
