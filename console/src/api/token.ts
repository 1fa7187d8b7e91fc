/**
 * The ADMIN_TOKEN, asked for once and kept in this browser's localStorage.
 * The console works without one when the server sets none (the API is then
 * open too); a 401 from any call clears it and asks again.
 */
const KEY = 'agent-server.admin-token';
const listeners = new Set<() => void>();

export function adminToken(): string | undefined {
  return localStorage.getItem(KEY) ?? undefined;
}

export function setAdminToken(token: string | undefined): void {
  if (token) localStorage.setItem(KEY, token);
  else localStorage.removeItem(KEY);
  for (const l of listeners) l();
}

let needed = false;
/** Set when the API answered 401: the app shows the token prompt. */
export function tokenNeeded(): boolean {
  return needed;
}
export function markTokenNeeded(): void {
  needed = true;
  for (const l of listeners) l();
}
export function clearTokenNeeded(): void {
  needed = false;
  for (const l of listeners) l();
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
