/**
 * Users mode's side of the console's credentials: the API's mode, the
 * session's CSRF token (sent as `x-csrf-token` on every change, the cookie
 * itself travels on its own), and whether the session ended. In open mode
 * none of this is used and ADMIN_TOKEN (token.ts) works as before.
 */
export type AuthMode = 'open' | 'users';

let mode: AuthMode = 'open';
let csrf: string | undefined;
let signedOut = false;
const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};

export function authMode(): AuthMode {
  return mode;
}
export function setAuthMode(next: AuthMode): void {
  mode = next;
}

export function csrfToken(): string | undefined {
  return csrf;
}

/** A session began (or was read back): its CSRF token goes with every change from now on. */
export function startSession(csrfToken: string): void {
  csrf = csrfToken;
  signedOut = false;
  notify();
}

/** The session ended (sign out, expiry, a deactivated user): the login page shows. */
export function endSession(): void {
  csrf = undefined;
  signedOut = true;
  notify();
}

export function sessionEnded(): boolean {
  return signedOut;
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
