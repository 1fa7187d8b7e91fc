import { ApiError, authHeaders, type Envelope } from '../../api/client.js';
import { adminToken, markTokenNeeded } from '../../api/token.js';

/** One Server-Sent Events frame: `id:`, `event:` and the `data:` lines joined. */
export interface SseFrame {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Splits a byte stream into SSE frames (the WHATWG rules that matter here:
 * CRLF/CR/LF line ends, `:` comments, several `data:` lines joined by `\n`,
 * one optional space after the colon). Ends when the stream ends.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let frame: SseFrame = { id: undefined, event: 'message', data: '' };
  let hasData = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: RegExpExecArray | null;
      while ((end = /\r\n|\r|\n/.exec(buffer))) {
        // A lone CR at the very end may be the first half of a CRLF: wait for more.
        if (end[0] === '\r' && end.index === buffer.length - 1) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === '') {
          if (hasData) yield frame;
          frame = { id: frame.id, event: 'message', data: '' };
          hasData = false;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'data') {
          frame.data = hasData ? `${frame.data}\n${v}` : v;
          hasData = true;
        } else if (field === 'event') frame.event = v;
        else if (field === 'id' && !v.includes('\0')) frame.id = v;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Opens an event stream with fetch (EventSource cannot send the admin token).
 * A non-stream answer is the API's error envelope: thrown as an ApiError,
 * field errors and all.
 */
export async function openSse(
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<AsyncGenerator<SseFrame>> {
  const sent = adminToken();
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      accept: 'text/event-stream',
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...authHeaders(),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (res.status === 401) markTokenNeeded(sent);
  if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text().catch(() => '');
    let env: Partial<Envelope<unknown>> | undefined;
    try {
      env = JSON.parse(text) as Envelope<unknown>;
    } catch {
      env = undefined;
    }
    const reason = typeof env?.errorDetails?.reason === 'string' ? `: ${env.errorDetails.reason}` : '';
    throw new ApiError(
      res.status,
      `${env?.message ?? (res.statusText || 'The stream did not open')}${reason}`,
      env?.errorDetails?.fields ?? [],
      env?.errorDetails ?? {},
    );
  }
  return parseSse(res.body);
}
