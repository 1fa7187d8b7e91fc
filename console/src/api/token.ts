/**
 * The ADMIN_TOKEN, asked for once and kept in this tab's sessionStorage: it
 * is gone when the tab closes, and no other tab or later visit finds it. The
 * console works without one when the server sets none (the API is then open
 * too); a 401 from any call forgets the token and asks again.
 */
const KEY = 'agent-server.admin-token';
const listeners = new Set<() => void>();

// Earlier versions kept the token in localStorage, forever: remove it.
try {
  localStorage.removeItem(KEY);
} catch {
  // storage unavailable (privacy settings): nothing was kept there either
}

export function adminToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function setAdminToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
  for (const l of listeners) l();
}

let needed = false;
/** Set when the API answered 401: the app shows the token prompt. */
export function tokenNeeded(): boolean {
  return needed;
}
/**
 * The API answered 401 to a request that carried `sent` (the token kept
 * then, or none): that token is wrong or revoked, so it is forgotten and the
 * prompt shown. A late 401 for a token already replaced changes nothing.
 */
export function markTokenNeeded(sent: string | undefined): void {
  if (sent !== adminToken()) return;
  sessionStorage.removeItem(KEY);
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
