import type { Context } from 'koa';
import { recordAudit } from '../../core/audit/audit-log.js';
import { OidcClient, OidcLoginError, type OidcIdentity } from '../../core/auth/oidc.js';
import type { Principal } from '../../core/auth/principal.js';
import type { OrgRole } from '../../core/auth/roles.js';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import { auditOrigin } from './audit-origin.js';
import { startSession } from './sessions.js';

/** A login started here may be finished this long after, on any replica (the flow is in the database). */
const FLOW_TTL_MS = 10 * 60_000;

export const OIDC_CALLBACK_PATH = '/api/agent-server/auth/oidc/callback';

/**
 * The browser that began a login holds its state in this cookie, and the
 * callback wants it back: a callback URL with someone else's code and state
 * (login CSRF, RFC 6749 §10.12) cannot sign a victim into the sender's
 * account. Sent only to the callback; SameSite=Lax, since the provider's
 * redirect back is a top-level GET from another site.
 */
export const FLOW_COOKIE = 'ags_oidc_state';

function flowCookie(config: Config, value: string, maxAgeSeconds: number): string {
  const secure = config.publicUrl?.startsWith('https:') ? '; Secure' : '';
  return `${FLOW_COOKIE}=${value}; Path=${OIDC_CALLBACK_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}
const DEFAULT_RETURN_TO = '/console/';

/** Why a login did not end in a session: the audit log's `reason`, and the sentence the person reads. */
const REFUSALS = {
  unknown_state: 'This sign-in link has expired or was already used. Please sign in again.',
  other_browser: 'This sign-in was started in another browser or tab. Please sign in again.',
  provider_unavailable: 'The identity provider could not be reached. Please try again later.',
  provider_error: 'The identity provider did not sign you in.',
  invalid_response: 'The identity provider’s answer could not be verified.',
  deactivated: 'Your account is deactivated.',
  not_provisioned: 'You have no account here yet; an administrator must create it first.',
  linked_elsewhere: 'An account with your email is already linked to another identity.',
  name_taken: 'An account with your user name already exists; ask an administrator to link it.',
  failed: 'Sign-in failed. Please try again.',
} as const;
export type RefusalReason = keyof typeof REFUSALS;

export type CallbackOutcome =
  { ok: true; returnTo: string } | { ok: false; reason: RefusalReason; message: string };

interface UserRow {
  id: string;
  user_name: string;
  org_role: OrgRole;
  active: boolean;
  email: string | null;
  oidc_issuer: string | null;
  oidc_subject: string | null;
  idp_groups: string[];
}

/** Who changes an account at login (links it, makes it, updates its groups): the identity provider, through us. */
const SSO_ACTOR = { kind: 'system', name: 'single sign-on' } as const;

const sameGroups = (a: string[], b: string[]) => [...a].sort().join('\n') === [...b].sort().join('\n');

/**
 * The path to send a person back to after signing in: only the console, on
 * this origin. Anything else (another host, `//host`, a path outside the
 * console) gives the console's home, so the login cannot be turned into an
 * open redirect.
 */
export function safeReturnTo(raw: string | undefined): string {
  if (!raw || raw.length > 2_048 || /[\\\s]/.test(raw)) return DEFAULT_RETURN_TO;
  const base = 'http://return-to.invalid';
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return DEFAULT_RETURN_TO;
  }
  if (url.origin !== base || !raw.startsWith('/')) return DEFAULT_RETURN_TO;
  if (url.pathname !== '/console' && !url.pathname.startsWith('/console/')) return DEFAULT_RETURN_TO;
  return url.pathname + url.search + url.hash;
}

/**
 * Single sign-on's two steps. `begin` stores the flow's secrets (state,
 * nonce, PKCE verifier) for ten minutes and gives the provider's URL;
 * `complete` takes the flow back by its state (single use), has the
 * provider's answer checked, finds or creates the user, and starts a
 * console session. Every outcome is audited (`auth.login`,
 * `auth.login_failed`).
 */
export class OidcLoginService {
  private readonly client: OidcClient | undefined;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    const oidc = config.auth.oidc;
    this.client = oidc && new OidcClient(oidc, publicBaseUrl(config) + OIDC_CALLBACK_PATH);
  }

  /** Whether single sign-on is on: users mode with OIDC_ISSUER set. */
  get enabled(): boolean {
    return this.config.auth.mode === 'users' && this.client !== undefined;
  }

  /** The provider's URL to send the person to, or a refusal when the provider cannot be reached. */
  async begin(ctx: Context, returnTo: string | undefined): Promise<{ url: string } | { refused: string }> {
    try {
      const { url, secrets } = await this.client!.start();
      await this.db('oidc_login_flows').where('expires_at', '<', this.db.fn.now()).delete();
      await this.db('oidc_login_flows').insert({
        state: secrets.state,
        code_verifier: secrets.codeVerifier,
        nonce: secrets.nonce,
        return_to: safeReturnTo(returnTo),
        expires_at: new Date(Date.now() + FLOW_TTL_MS),
      });
      ctx.append('Set-Cookie', flowCookie(this.config, secrets.state, FLOW_TTL_MS / 1000));
      return { url };
    } catch (err) {
      this.logger.warn({ err: messageOf(err) }, 'single sign-on could not start');
      return { refused: REFUSALS.provider_unavailable };
    }
  }

  async complete(
    ctx: Context,
    state: string | undefined,
    providerError: string | undefined,
  ): Promise<CallbackOutcome> {
    try {
      return await this.completeOrThrow(ctx, state, providerError);
    } catch (err) {
      this.logger.error({ err }, 'single sign-on failed');
      return this.refuse(ctx, 'failed', { error: messageOf(err) });
    }
  }

  private async completeOrThrow(
    ctx: Context,
    state: string | undefined,
    providerError: string | undefined,
  ): Promise<CallbackOutcome> {
    const began = ctx.cookies.get(FLOW_COOKIE);
    if (state && began) ctx.append('Set-Cookie', flowCookie(this.config, '', 0));
    if (state && began !== state) return this.refuse(ctx, began ? 'other_browser' : 'unknown_state', {});
    // Taken and deleted at once: a state works once, on whichever replica sees it first.
    const flow = state
      ? await this.db('oidc_login_flows')
          .where({ state })
          .where('expires_at', '>', this.db.fn.now())
          .delete()
          .returning<
            Array<{ state: string; nonce: string; code_verifier: string; return_to: string | null }>
          >(['state', 'nonce', 'code_verifier', 'return_to'])
          .then((rows) => rows[0])
      : undefined;
    if (!flow) return this.refuse(ctx, 'unknown_state', providerError ? { error: providerError } : {});
    let identity: OidcIdentity;
    try {
      identity = await this.client!.finish(ctx.querystring, {
        state: flow.state,
        nonce: flow.nonce,
        codeVerifier: flow.code_verifier,
      });
    } catch (err) {
      if (err instanceof OidcLoginError) return this.refuse(ctx, err.code, { error: err.message });
      throw err;
    }
    const found = await this.userFor(ctx, identity);
    if ('reason' in found)
      return this.refuse(ctx, found.reason, { subject: identity.subject }, identity.userName);
    const user = found.user;
    if (!user.active)
      return this.refuse(ctx, 'deactivated', { subject: identity.subject }, user.user_name, user.id);
    await this.db('users')
      .where({ id: user.id })
      .update({
        idp_groups: identity.groups,
        email: user.email ?? identity.email ?? null,
        updated_at: this.db.fn.now(),
      });
    // The groups claim decides roles (AUTH_GROUP_ROLES): a change of it is a change of the user's roles.
    if (!sameGroups(user.idp_groups, identity.groups))
      await recordAudit(this.db, {
        actor: SSO_ACTOR,
        action: 'user.update',
        resourceType: 'user',
        resourceId: user.id,
        ...auditOrigin(ctx),
        before: { idp_groups: user.idp_groups },
        after: { idp_groups: identity.groups },
        details: { method: 'oidc', issuer: identity.issuer },
      });
    const session = await startSession(this.db, this.config, ctx, user.id, 'oidc');
    const actor: Principal = {
      kind: 'user',
      via: 'session',
      userId: user.id,
      sessionId: session.sessionId,
      name: user.user_name,
      orgRole: user.org_role,
      projects: new Map(),
    };
    await recordAudit(this.db, {
      actor,
      action: 'auth.login',
      resourceType: 'user',
      resourceId: user.id,
      ...auditOrigin(ctx),
      status: 302,
      details: {
        method: 'oidc',
        issuer: identity.issuer,
        subject: identity.subject,
        groups: identity.groups,
        ...(found.created ? { provisioned: true } : {}),
        ...(found.linked ? { linked_by_email: true } : {}),
      },
    });
    return { ok: true, returnTo: safeReturnTo(flow.return_to ?? undefined) };
  }

  /**
   * The account of this identity: the one linked to it (issuer and subject);
   * else the one with its email, when the provider verified that email and
   * the account is linked to no other identity of this provider (it is
   * linked now); else a new member, unless OIDC_JIT=false.
   */
  private async userFor(
    ctx: Context,
    identity: OidcIdentity,
  ): Promise<{ user: UserRow; created?: boolean; linked?: boolean } | { reason: RefusalReason }> {
    const columns = [
      'id',
      'user_name',
      'org_role',
      'active',
      'email',
      'oidc_issuer',
      'oidc_subject',
      'idp_groups',
    ];
    const linked = await this.db('users')
      .where({ oidc_issuer: identity.issuer, oidc_subject: identity.subject })
      .first<UserRow | undefined>(columns);
    if (linked) return { user: linked };
    if (identity.email && identity.emailVerified) {
      const email = identity.email.toLowerCase();
      const byEmail = await this.db('users')
        .whereRaw('lower(email) = ?', [email])
        .orWhereRaw('lower(user_name) = ?', [email])
        .orderBy('created_at')
        .first<UserRow | undefined>(columns);
      if (byEmail) {
        if (byEmail.oidc_subject && byEmail.oidc_issuer === identity.issuer)
          return { reason: 'linked_elsewhere' };
        // Refused by the caller as it stands, not linked first.
        if (!byEmail.active) return { user: byEmail };
        const link = { oidc_issuer: identity.issuer, oidc_subject: identity.subject };
        await this.db('users').where({ id: byEmail.id }).update(link);
        await recordAudit(this.db, {
          actor: SSO_ACTOR,
          action: 'user.update',
          resourceType: 'user',
          resourceId: byEmail.id,
          ...auditOrigin(ctx),
          before: { oidc_issuer: byEmail.oidc_issuer, oidc_subject: byEmail.oidc_subject },
          after: link,
          details: { method: 'oidc', linked_by_email: true },
        });
        return { user: byEmail, linked: true };
      }
    }
    if (!this.config.auth.oidc!.jit) return { reason: 'not_provisioned' };
    const taken = await this.db('users')
      .whereRaw('lower(user_name) = ?', [identity.userName.toLowerCase()])
      .first<{ id: string } | undefined>('id');
    if (taken) return { reason: 'name_taken' };
    const fields = {
      user_name: identity.userName,
      display_name: identity.displayName ?? null,
      email: identity.email ?? null,
      org_role: 'member' as const,
      active: true,
      oidc_issuer: identity.issuer,
      oidc_subject: identity.subject,
      idp_groups: identity.groups,
    };
    const [created] = await this.db('users').insert(fields).returning<UserRow[]>(columns);
    await recordAudit(this.db, {
      actor: SSO_ACTOR,
      action: 'user.create',
      resourceType: 'user',
      resourceId: created!.id,
      ...auditOrigin(ctx),
      after: fields,
      details: { method: 'oidc', provisioned: true },
    });
    return { user: created!, created: true };
  }

  private async refuse(
    ctx: Context,
    reason: RefusalReason,
    details: Record<string, unknown>,
    name = 'unknown',
    userId?: string,
  ): Promise<CallbackOutcome> {
    await recordAudit(this.db, {
      actor: { kind: 'anonymous', name, ...(userId ? { userId } : {}) },
      action: 'auth.login_failed',
      ...(userId ? { resourceType: 'user', resourceId: userId } : {}),
      ...auditOrigin(ctx),
      details: { method: 'oidc', reason, ...details },
    }).catch((err: unknown) => this.logger.error({ err }, 'could not audit a failed sign-in'));
    return { ok: false, reason, message: REFUSALS[reason] };
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
