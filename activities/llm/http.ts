import { UpstreamError } from './errors.js';
import type { ProviderTarget } from './types.js';

export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** A streaming call: the vendor answers with headers at once, so their delay measures the connection. */
  stream?: boolean;
}

/** Retry-After as seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Pulls the human message out of any of the three vendors' error bodies. */
export function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof body.error === 'string') return body.error;
    return body.error?.message ?? body.message ?? text;
  } catch {
    return text || 'no response body';
  }
}

/**
 * POSTs to the provider. `timeout_ms` bounds the whole call, body included;
 * `signal` is the caller's (client gone). fetch exposes no connect phase, so
 * `connect_timeout_ms` bounds the wait for response headers of streaming
 * calls only (vendors send those at once); a non-streaming answer's headers
 * come when the whole answer is ready, which only `timeout_ms` may bound.
 * The returned body is still streaming and is cancelled by the same signals.
 */
export async function postUpstream(
  target: ProviderTarget,
  call: UpstreamCall,
  signal?: AbortSignal,
): Promise<Response> {
  const signals = [AbortSignal.timeout(target.timeout_ms)];
  if (signal) signals.push(signal);
  const connect = new AbortController();
  const connectTimer = call.stream ? setTimeout(() => connect.abort(), target.connect_timeout_ms) : undefined;
  signals.push(connect.signal);
  let res: Response;
  try {
    res = await fetch(call.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...call.headers },
      body: JSON.stringify(call.body),
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    const timedOut = (err as Error).name === 'TimeoutError' || connect.signal.aborted;
    throw new UpstreamError(
      timedOut ? 504 : 502,
      `${target.name}: ${timedOut ? 'timed out' : 'could not be reached'}`,
      true,
    );
  } finally {
    clearTimeout(connectTimer);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    throw new UpstreamError(
      res.status,
      `${target.name}: ${upstreamMessage(text)}`,
      res.status === 429 || res.status >= 500,
      parseRetryAfter(res.headers.get('retry-after')),
    );
  }
  return res;
}

/** Server-sent events of a response body, each as its `event` name and `data` text. */
export async function* readSse(
  res: Response,
  providerName: string,
): AsyncGenerator<{ event?: string; data: string }> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) yield { event, data: data.join('\n') };
      }
    }
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new UpstreamError(502, `${providerName}: stream broke: ${(err as Error).message}`, false);
  }
}
