/**
 * Webhook secrets and signatures, the Standard Webhooks scheme
 * (https://www.standardwebhooks.com): a secret is `whsec_` and the base64 of
 * 32 random bytes, the HMAC-SHA256 key being those bytes; each delivery
 * carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC of "<id>.<timestamp>.<body>">`, so
 * any Standard Webhooks library verifies it.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a signed delivery; `now` in milliseconds. */
export function signedHeaders(
  secret: string,
  id: string,
  body: string,
  now = Date.now(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secret, id, timestamp, body),
  };
}
