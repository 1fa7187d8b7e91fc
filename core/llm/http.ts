import type { Readable } from 'node:stream';
import { context } from '@opentelemetry/api';
import { request, type Agent, type Dispatcher } from 'undici';
import { egressAgent, egressRefusal } from '../security/egress-agent.js';
import { destination, EgressRedirectDeniedError, findEgressDenial } from '../security/egress-policy.js';
import { vendorRequestContext } from '../telemetry/model-call-context.js';
import { redactUpstreamText, UpstreamError } from './errors.js';
import { HOPS_HEADER } from './hops.js';
import type { ProviderTarget } from './types.js';

export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** A streaming call: the vendor answers with headers at once, so their delay measures the connection. */
  stream?: boolean;
}

/** A vendor's successful answer; its body is still streaming and is cancelled by the call's signals. */
export interface UpstreamResponse {
  status: number;
  body: Readable;
  json(): Promise<unknown>;
  text(): Promise<string>;
  /** True once the caller's own signal has aborted the call (as opposed to a timeout or a broken stream). */
  cancelledByCaller(): boolean;
}

/** Retry-After as seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string | null | undefined): number | undefined {
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
 * Keep-alive connection pools, one undici Agent per connect timeout (the
 * Agent holds a pool per origin), each connecting through the egress policy
 * (EGRESS_ALLOW / EGRESS_DENY, checked after DNS: core/security/egress-agent.ts).
 * WHATWG fetch cost a fresh Request/Response, web streams and composite abort
 * signals per call; undici's `request` on a pooled connection is the same
 * client without them.
 */
function agentFor(connectTimeoutMs: number): Agent {
  return egressAgent(connectTimeoutMs);
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * A provider's redirect, which nothing follows: the request carries the
 * provider's credentials, which must not go wherever an answer points (set
 * base_url to the final address instead). The caller is told where it
 * pointed (host and port only) and, when the egress policy refuses that
 * destination, that it does: an EgressRedirectDeniedError, final like any
 * refusal. Any other redirect is a non-retryable UpstreamError.
 */
async function redirectError(
  target: ProviderTarget,
  call: UpstreamCall,
  status: number,
  location: string,
): Promise<Error> {
  let url: URL | undefined;
  try {
    url = new URL(location, call.url);
  } catch {
    // Reported below as a redirect to nowhere in particular.
  }
  const where = url
    ? destination(
        url.hostname.replace(/^\[|\]$/g, ''),
        Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      )
    : 'an invalid address';
  const refused = url && (await egressRefusal(url.href));
  if (refused)
    return new EgressRedirectDeniedError(
      redactUpstreamText(
        `${target.name}: upstream redirected to ${where}, which the egress policy refuses (${refused.message})`,
        target,
      ),
    );
  return new UpstreamError(
    status,
    redactUpstreamText(
      `${target.name}: upstream answered ${status}, a redirect to ${where}; redirects are not followed (set the provider's base_url to the final address)`,
      target,
    ),
    false,
  );
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

class UpstreamTimeout extends Error {
  override name = 'TimeoutError';
  constructor() {
    super('The operation was aborted due to timeout');
  }
}

/**
 * POSTs to the provider. `timeout_ms` bounds the whole call, body included;
 * `signal` is the caller's (client gone). `connect_timeout_ms` bounds the
 * TCP/TLS connect and, for streaming calls, the wait for response headers
 * (vendors send those at once); a non-streaming answer's headers come when
 * the whole answer is ready, which only `timeout_ms` may bound. The returned
 * body is still streaming and is cancelled by the same signals.
 */
export async function postUpstream(
  target: ProviderTarget,
  call: UpstreamCall,
  signal?: AbortSignal,
): Promise<UpstreamResponse> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort(new UpstreamTimeout());
  }, target.timeout_ms);
  const onCallerAbort = () => abort.abort(signal!.reason);
  if (signal?.aborted) onCallerAbort();
  else signal?.addEventListener('abort', onCallerAbort, { once: true });
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerAbort);
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...call.headers,
    [HOPS_HEADER]: String((target.hops ?? 0) + 1),
  };
  let res: Dispatcher.ResponseData;
  try {
    res = await context.with(vendorRequestContext(context.active(), headers), () =>
      request(call.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(call.body),
        signal: abort.signal,
        dispatcher: agentFor(target.connect_timeout_ms),
        headersTimeout: call.stream ? target.connect_timeout_ms : 0,
        bodyTimeout: 0,
      }),
    );
  } catch (err) {
    done();
    if (signal?.aborted) throw err;
    // A configuration refusal, not an outage: never retried, never a fallback's cue.
    const denied = findEgressDenial(err);
    if (denied) throw denied;
    const code = (err as { code?: string }).code;
    const late = timedOut || (code !== undefined && TIMEOUT_CODES.has(code));
    throw new UpstreamError(
      late ? 504 : 502,
      `${target.name}: ${late ? 'timed out' : 'could not be reached'}`,
      true,
    );
  }
  const body = res.body;
  body.once('close', done);
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const text = await body.text().catch(() => '');
    const location = res.headers.location;
    if (REDIRECT_STATUSES.has(res.statusCode) && typeof location === 'string')
      throw await redirectError(target, call, res.statusCode, location);
    const retryAfter = res.headers['retry-after'];
    throw new UpstreamError(
      res.statusCode,
      `${target.name}: ${redactUpstreamText(upstreamMessage(text), target)}`,
      res.statusCode === 429 || res.statusCode >= 500,
      parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
    );
  }
  return {
    status: res.statusCode,
    body,
    json: () =>
      body.json().catch((err: unknown) => {
        if (signal?.aborted) throw err;
        // Not JSON (or cut short): the vendor's fault, as a break in a stream would be.
        throw new UpstreamError(502, `${target.name}: unreadable response body`, false);
      }),
    text: () => body.text(),
    cancelledByCaller: () => signal?.aborted === true,
  };
}

/** Server-sent events of a response body, each as its `event` name and `data` text. */
export async function* readSse(
  res: UpstreamResponse,
  providerName: string,
): AsyncGenerator<{ event?: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      if (buffer.includes('\r')) buffer = buffer.replace(/\r\n?/g, '\n');
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
    if (res.cancelledByCaller() || (err as Error).name === 'AbortError') throw err;
    throw new UpstreamError(502, `${providerName}: stream broke: ${(err as Error).message}`, false);
  }
}
