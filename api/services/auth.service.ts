import type { Context } from 'koa';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import { recordAudit } from '../../core/audit/audit-log.js';
import { createFirstOwner, hasUsers, isSetupToken } from '../../core/auth/first-owner.js';
import { verifyPassword } from '../../core/auth/passwords.js';
import type { Principal } from '../../core/auth/principal.js';
import type { OrgRole, ProjectRole } from '../../core/auth/roles.js';
import {
  AppError,
  ConflictError,
  STATUS_MESSAGES,
  UnauthorizedError,
  ValidationError,
} from '../../core/errors.js';
import { loginRetryAfter } from '../../core/auth/login-throttle.js';
import type { LoginBody, SetupBody } from '../schemas/auth.schemas.js';
import { auditOrigin } from './audit-origin.js';
import { endSession, startSession } from './sessions.js';
import { userView, type UserRow, type UserView } from './user-view.js';

export const OIDC_LOGIN_URL = '/api/agent-server/auth/oidc/login';

export interface AuthConfigView {
  mode: 'open' | 'users';
  setup_required: boolean;
  password_login: boolean;
  sso: { button_label: string; login_url: string } | null;
}

export interface SignedIn {
  user: UserView;
  csrf_token: string;
}

export interface SessionView {
  user: {
    id: string;
    user_name: string;
    display_name: string | null;
    email: string | null;
    org_role: OrgRole;
  } | null;
  principal: { kind: Principal['kind']; via: Principal['via']; name: string; org_role: OrgRole };
  project_roles: Array<{ project_id: string; role: ProjectRole }>;
  csrf_token: string | null;
}

/** Signing in and out with a local password, and the first owner's setup. */
export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
  ) {}

  /** What the console's login page needs to know, before anyone is signed in. */
  async publicConfig(): Promise<AuthConfigView> {
    const { mode, oidc } = this.config.auth;
    return {
      mode,
      setup_required: mode === 'users' && !(await hasUsers(this.db)),
      password_login: true,
      sso: oidc ? { button_label: oidc.buttonLabel, login_url: OIDC_LOGIN_URL } : null,
    };
  }

  async setup(ctx: Context, body: SetupBody): Promise<SignedIn> {
    this.usersModeOnly();
    // /auth/config says as much to anyone: no secret is given away by saying it first.
    if (await hasUsers(this.db))
      throw new ConflictError({ reason: 'the first owner already exists: sign in' });
    if (!(await isSetupToken(this.db, this.config.auth.setupToken, body.setup_token))) {
      await recordAudit(this.db, {
        actor: { kind: 'anonymous', name: body.user_name },
        action: 'auth.setup_failed',
        status: 401,
        ...auditOrigin(ctx),
      });
      throw ValidationError.field(
        'setup_token',
        'setup_token is not a valid setup token (see the log at start)',
      );
    }
    const owner = await createFirstOwner(
      this.db,
      { userName: body.user_name, password: body.password, displayName: body.display_name ?? null },
      'any-user',
    );
    const row = await this.user(owner.id);
    await recordAudit(this.db, {
      actor: { kind: 'setup', name: row.user_name, userId: row.id },
      action: 'user.create',
      resourceType: 'user',
      resourceId: row.id,
      after: userView(row),
      status: 200,
      details: { first_owner: true },
      ...auditOrigin(ctx),
    });
    return this.signIn(ctx, row, 'setup');
  }

  /**
   * A wrong password, an unknown or deactivated user, a user with no
   * password: the same 401, after the same argon2 work, so the answer tells
   * nothing about which user names exist.
   */
  async login(ctx: Context, body: LoginBody): Promise<SignedIn> {
    this.usersModeOnly();
    const wait = await loginRetryAfter(
      this.db,
      this.config.auth.loginThrottle,
      body.user_name,
      ctx.ip || undefined,
    );
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      throw new AppError(429, STATUS_MESSAGES[429]!, {
        reason: `too many failed sign-ins: try again in ${wait} s`,
        retry_after_seconds: wait,
      });
    }
    const row = await this.db('users')
      .whereRaw('lower(user_name) = lower(?)', [body.user_name])
      .first<UserRow | undefined>('*');
    const matched = await verifyPassword(row?.active ? row.password_hash : null, body.password);
    if (!row || !matched) {
      await recordAudit(this.db, {
        actor: { kind: 'anonymous', name: body.user_name },
        action: 'auth.login_failed',
        resourceType: 'user',
        ...(row ? { resourceId: row.id } : {}),
        status: 401,
        details: { method: 'password' },
        ...auditOrigin(ctx),
      });
      throw new UnauthorizedError();
    }
    return this.signIn(ctx, row, 'password');
  }

  async logout(ctx: Context, principal: Principal): Promise<void> {
    if (principal.sessionId) await endSession(this.db, this.config, ctx, principal.sessionId);
    await recordAudit(this.db, {
      actor: principal,
      action: 'auth.logout',
      resourceType: 'user',
      ...(principal.userId ? { resourceId: principal.userId } : {}),
      status: 200,
      ...auditOrigin(ctx),
    });
  }

  /** The caller as the console sees it: who, by what, with which roles (groups included, a token's narrowing applied). */
  async session(principal: Principal): Promise<SessionView> {
    const user = principal.userId
      ? await this.db('users')
          .where({ id: principal.userId })
          .first<SessionView['user'] | undefined>('id', 'user_name', 'display_name', 'email', 'org_role')
      : undefined;
    const session = principal.sessionId
      ? await this.db('user_sessions')
          .where({ id: principal.sessionId })
          .first<{ csrf_token: string } | undefined>('csrf_token')
      : undefined;
    return {
      user: user ?? null,
      principal: {
        kind: principal.kind,
        via: principal.via,
        name: principal.name,
        org_role: principal.orgRole,
      },
      project_roles: [...principal.projects].map(([project_id, role]) => ({ project_id, role })),
      csrf_token: session?.csrf_token ?? null,
    };
  }

  private async signIn(ctx: Context, row: UserRow, method: 'password' | 'setup'): Promise<SignedIn> {
    const started = await startSession(this.db, this.config, ctx, row.id, method);
    await recordAudit(this.db, {
      actor: {
        kind: 'user',
        via: 'session',
        userId: row.id,
        sessionId: started.sessionId,
        name: row.user_name,
        orgRole: row.org_role,
        projects: new Map(),
      },
      action: 'auth.login',
      resourceType: 'user',
      resourceId: row.id,
      status: 200,
      details: { method },
      ...auditOrigin(ctx),
    });
    return { user: userView(await this.user(row.id)), csrf_token: started.csrfToken };
  }

  private usersModeOnly(): void {
    if (this.config.auth.mode !== 'users')
      throw new ConflictError({
        reason: 'AUTH_MODE is open: there is nobody to sign in as (set AUTH_MODE=users)',
      });
  }

  private async user(id: string): Promise<UserRow> {
    return (await this.db('users').where({ id }).first<UserRow | undefined>('*'))!;
  }
}
