import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';
import { authMode, csrfToken, endSession } from './session.js';
import { adminToken, markTokenNeeded } from './token.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Open mode: adds the admin token; a 401 forgets it and shows the token
 * prompt. Users mode: the session cookie goes by itself (same origin), each
 * change carries the session's CSRF token, and a 401 (the session expired,
 * or its user was deactivated) shows the login page.
 */
const auth: Middleware = {
  onRequest({ request }) {
    const token = adminToken();
    if (token && authMode() === 'open') request.headers.set('authorization', `Bearer ${token}`);
    const csrf = csrfToken();
    if (csrf && !SAFE_METHODS.has(request.method)) request.headers.set('x-csrf-token', csrf);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status !== 401) return response;
    if (authMode() === 'users') endSession();
    else markTokenNeeded(/^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1]);
    return response;
  },
};

/** Marks the console's own calls, which the trace list and statistics leave out unless asked (include_console). */
const markConsole: Middleware = {
  onRequest({ request }) {
    request.headers.set('x-agent-server-client', 'console');
    return request;
  },
};

/** The typed client, generated from the API's own OpenAPI document (npm run console:client). */
export const api = createClient<paths>({ baseUrl: '' });
api.use(auth, markConsole);

/** The API's envelope. */
export interface Envelope<T> {
  error: boolean;
  message: string;
  data: T;
  status: number;
  errorDetails: { fields?: FieldError[]; [k: string]: unknown };
}
export interface FieldError {
  field: string;
  message: string;
  type: string;
}

/** Thrown by `unwrap` for an error envelope; forms show `fields` next to their inputs. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: FieldError[],
    readonly details: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The API's message for one field (dotted path), if it named it. */
  fieldMessage(field: string): string | undefined {
    return this.fields.find((f) => f.field === field)?.message;
  }
}

/** The `data` of a successful envelope, or an ApiError carrying the field errors. */
export async function unwrap<T>(
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  const body = (data ?? error) as Envelope<T> | undefined;
  if (!response.ok || !body || body.error) {
    const fields = body?.errorDetails?.fields ?? [];
    const reason = typeof body?.errorDetails?.reason === 'string' ? `: ${body.errorDetails.reason}` : '';
    throw new ApiError(
      response.status,
      `${body?.message ?? response.statusText}${reason}`,
      fields,
      body?.errorDetails ?? {},
    );
  }
  return body.data;
}

/** Headers for calls made with fetch directly (streams: EventSource cannot send Authorization). */
export function authHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const token = adminToken();
  if (token && authMode() === 'open') headers.authorization = `Bearer ${token}`;
  const csrf = csrfToken();
  if (csrf) headers['x-csrf-token'] = csrf;
  return headers;
}
