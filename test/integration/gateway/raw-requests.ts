import type { TestApi } from '../../helpers/api.js';
import type { Format } from './gateway-harness.js';

/** A minimal valid chat request on each surface, sent with plain fetch so tests see status, headers and bytes. */
export function chatRequest(
  api: TestApi,
  surface: Format,
  model: string,
  opts: { secret?: string; stream?: boolean; extra?: Record<string, unknown>; signal?: AbortSignal } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  let url: string;
  let body: Record<string, unknown>;
  if (surface === 'openai') {
    url = `${api.url}/api/gateway/openai/v1/chat/completions`;
    if (opts.secret) headers.authorization = `Bearer ${opts.secret}`;
    body = { model, messages: [{ role: 'user', content: 'hi' }], ...(opts.stream ? { stream: true } : {}) };
  } else if (surface === 'anthropic') {
    url = `${api.url}/api/gateway/anthropic/v1/messages`;
    if (opts.secret) headers['x-api-key'] = opts.secret;
    headers['anthropic-version'] = '2023-06-01';
    body = {
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      ...(opts.stream ? { stream: true } : {}),
    };
  } else {
    const action = opts.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    url = `${api.url}/api/gateway/gemini/v1beta/models/${model}:${action}`;
    if (opts.secret) headers['x-goog-api-key'] = opts.secret;
    body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  }
  return fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...body, ...opts.extra }),
    signal: opts.signal,
  });
}

/** The error body's message and the vendor-specific markers of its shape. */
export function expectShape(surface: Format, body: unknown): string {
  const b = body as Record<string, Record<string, unknown>>;
  if (surface === 'openai') {
    if (typeof b.error?.message !== 'string' || !('type' in b.error) || !('code' in b.error))
      throw new Error(`not an OpenAI error: ${JSON.stringify(body)}`);
    return b.error.message;
  }
  if (surface === 'anthropic') {
    if ((body as { type?: string }).type !== 'error' || typeof b.error?.type !== 'string')
      throw new Error(`not an Anthropic error: ${JSON.stringify(body)}`);
    return String(b.error.message);
  }
  if (typeof b.error?.code !== 'number' || typeof b.error.status !== 'string')
    throw new Error(`not a Gemini error: ${JSON.stringify(body)}`);
  return String(b.error.message);
}
