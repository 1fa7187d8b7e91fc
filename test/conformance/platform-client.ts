/**
 * The few calls of our public REST API the conformance adapter makes, as any
 * API client would: JSON in, the envelope out (docs/api.md#envelope).
 */

export interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  data: T;
  /** `errorDetails` of the envelope: why a 4xx happened (e.g. `authorization_url` on a 409). */
  details: Record<string, unknown>;
  text: string;
}

/** An answer the adapter did not expect: its status and body go to stderr as they are. */
export class UnexpectedAnswer extends Error {
  override name = 'UnexpectedAnswer';
}

/** No call of the adapter should take longer; a turn that waits returns paused well within it. */
const REQUEST_TIMEOUT_MS = Number(process.env.CONFORMANCE_REQUEST_TIMEOUT_MS ?? 30_000);

export class PlatformClient {
  constructor(
    private readonly baseUrl: string,
    readonly projectId: string,
  ) {}

  async call<T = Record<string, unknown>>(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<ApiAnswer<T>> {
    const separator = route.includes('?') ? '&' : '?';
    const url = `${this.baseUrl}/api/agent-server${route}${separator}project_id=${this.projectId}`;
    const res = await fetch(url, {
      method,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let envelope: { data?: T; errorDetails?: Record<string, unknown>; error?: { details?: unknown } } = {};
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch {
      // not JSON: `text` says what came back
    }
    const details = (envelope.errorDetails ?? envelope.error?.details ?? {}) as Record<string, unknown>;
    return { status: res.status, data: (envelope.data ?? {}) as T, details, text };
  }

  /** The call's `data`, or an UnexpectedAnswer naming the call when it is not a 200. */
  async expectOk<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<T> {
    const answer = await this.call<T>(method, route, body);
    if (answer.status !== 200)
      throw new UnexpectedAnswer(`${method} ${route} answered ${answer.status}: ${answer.text}`);
    return answer.data;
  }
}
