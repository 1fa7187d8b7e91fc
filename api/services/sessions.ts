import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { credentialDigest, newCredential } from '../../core/auth/secrets.js';
import { SESSION_COOKIE } from '../http/authenticate.js';

/** How a session began: a local password, the first owner's setup, single sign-on. */
export type SessionMethod = 'password' | 'setup' | 'oidc';

export interface StartedSession {
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * The cookie's attributes, written by hand rather than through Koa's cookies:
 * Koa refuses a Secure cookie on a plain connection, and behind a proxy that
 * ends TLS (PUBLIC_URL https, the API itself on http) Secure is what we want.
 */
function cookieHeader(config: Config, value: string, maxAgeSeconds: number): string {
  const secure = config.publicUrl?.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}

/**
 * Signs `userId` in: a session row holding the cookie's digest and a CSRF
 * token, the cookie on the answer, and the user's last login time. Shared by
 * every way of signing in (password, setup, single sign-on).
 */
export async function startSession(
  db: Db,
  config: Config,
  ctx: Context,
  userId: string,
  method: SessionMethod,
): Promise<StartedSession> {
  const secret = newCredential('session');
  const csrfToken = randomBytes(32).toString('base64url');
  const ttl = config.auth.sessionTtlSeconds;
  const expiresAt = new Date(Date.now() + ttl * 1000);
  const [row] = await db('user_sessions')
    .insert({
      token_hash: credentialDigest(secret),
      csrf_token: csrfToken,
      user_id: userId,
      method,
      ip: ctx.ip || null,
      user_agent: ctx.get('user-agent') || null,
      expires_at: expiresAt,
    })
    .returning<Array<{ id: string }>>('id');
  await db('users').where({ id: userId }).update({ last_login_at: db.fn.now() });
  ctx.append('Set-Cookie', cookieHeader(config, secret, ttl));
  return { sessionId: row!.id, csrfToken, expiresAt };
}

/** Signs a session out: its row is deleted (on every replica at once) and the browser told to drop the cookie. */
export async function endSession(db: Db, config: Config, ctx: Context, sessionId: string): Promise<void> {
  await db('user_sessions').where({ id: sessionId }).delete();
  clearSessionCookie(config, ctx);
}

export function clearSessionCookie(config: Config, ctx: Context): void {
  ctx.append('Set-Cookie', cookieHeader(config, '', 0));
}

/** Every session of a user ends (deactivated, password changed by an admin, deleted). */
export async function endUserSessions(db: Db, userId: string): Promise<number> {
  return db('user_sessions').where({ user_id: userId }).delete();
}
