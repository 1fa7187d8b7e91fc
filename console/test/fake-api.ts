/**
 * The API as the components' tests script it: each test says what the API
 * answers (`answer`), in its own envelope, and reads back what was sent
 * (`requests`). Anything not scripted answers 404, as the API would.
 */

export interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

type Handler = (sent: Sent) => Response | undefined;

let handlers: Array<[string, Handler]> = [];
export const requests: Sent[] = [];

/** Answers `METHOD /path` (the path without its query) with what `handler` returns. */
export function answer(route: string, handler: Handler | Response | (() => Response)): void {
  handlers.push([route, typeof handler === 'function' ? handler : () => handler.clone()]);
}

/** A successful envelope. */
export function ok(data: unknown): Response {
  return Response.json({ error: false, message: 'OK', data, status: 200, errorDetails: {} });
}

/** An error envelope, as the API's error middleware writes it. */
export function failure(
  status: number,
  message: string,
  errorDetails: Record<string, unknown> = {},
): Response {
  return Response.json({ error: true, message, data: null, status, errorDetails }, { status });
}

/** A 400 naming fields, as `validate()` answers. */
export function invalid(fields: Record<string, string>): Response {
  return failure(400, 'Validation failed', {
    fields: Object.entries(fields).map(([field, message]) => ({ field, message, type: 'any.invalid' })),
  });
}

async function dispatch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const text = await request.text();
  const sent: Sent = {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    body: text ? (JSON.parse(text) as unknown) : undefined,
  };
  requests.push(sent);
  for (const [route, handler] of [...handlers].reverse()) {
    if (route !== `${sent.method} ${sent.path}`) continue;
    const res = handler(sent);
    if (res) return res;
  }
  return failure(404, `No answer scripted for ${sent.method} ${sent.path}`);
}

/**
 * jsdom runs on Node's fetch, whose Request has no document to resolve the
 * client's relative URLs against: resolve them against the page, as a browser does.
 */
export function installFakeApi(): void {
  const NodeRequest = globalThis.Request;
  globalThis.Request = class extends NodeRequest {
    constructor(input: RequestInfo | URL, init?: RequestInit) {
      super(typeof input === 'string' ? new URL(input, window.location.href) : input, init);
    }
  };
  globalThis.fetch = dispatch;
}

export function resetFakeApi(): void {
  handlers = [];
  requests.length = 0;
}
