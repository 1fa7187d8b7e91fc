import { unwrap } from './client.js';
import { csrfToken } from './session.js';
import type { AuthConfig, LoginBody, Session, SetupBody } from './types.js';

/**
 * Users mode's login routes (typed from schema.d.ts). They are called with
 * fetch directly, not through the client: their own 401 (a wrong password, no
 * session yet) is an answer, not a session that ended, and /auth/config
 * decides the mode before anything else runs.
 */
const BASE = '/api/agent-server/auth';

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'x-agent-server-client': 'console' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const csrf = csrfToken();
  if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
  const response = await fetch(`${BASE}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => undefined)) as unknown;
  return unwrap<T>(Promise.resolve({ data: response.ok ? json : undefined, error: json, response }));
}

export const authApi = {
  config: () => call<AuthConfig>('GET', '/config'),
  session: () => call<Session>('GET', '/session'),
  login: (body: LoginBody) => call<unknown>('POST', '/login', body),
  setup: (body: SetupBody) => call<unknown>('POST', '/setup', body),
  logout: () => call<unknown>('POST', '/logout', {}),
};
