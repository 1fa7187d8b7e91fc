import type { Context } from 'koa';
import type { Db } from '../../core/db/knex.js';
import { recordAudit } from '../../core/audit/audit-log.js';
import { hashPassword } from '../../core/auth/passwords.js';
import type { Principal } from '../../core/auth/principal.js';
import { ConflictError, ForbiddenError, isUniqueViolation, NotFoundError } from '../../core/errors.js';
import type { UserCreateBody, UserListQuery, UserUpdateBody } from '../schemas/users.schemas.js';
import { auditOrigin } from './audit-origin.js';
import { endUserSessions } from './sessions.js';
import { userView, type UserRow, type UserView } from './user-view.js';

const userNameTaken = () =>
  new ConflictError({ field: 'user_name', reason: 'a user with this name already exists' });
const lastOwner = () =>
  new ConflictError({ reason: 'this is the last active owner: make another user owner first' });

/** Escapes LIKE's wildcards, so a name searched for is matched as written. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The organisation's users, managed by its admins. Two rules keep it
 * governable: only an owner makes, unmakes or changes an owner (an admin
 * cannot promote themselves, nor take over an owner's account by resetting
 * its password), and the last active owner is never demoted, deactivated or
 * deleted (409).
 */
export class UsersService {
  constructor(private readonly db: Db) {}

  async list(query: UserListQuery): Promise<UserView[]> {
    const q = this.db('users')
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(query.limit)
      .offset(query.offset);
    if (query.user_name) q.whereILike('user_name', `%${likeLiteral(query.user_name)}%`);
    if (query.active !== undefined) q.where({ active: query.active });
    return (await q.select<UserRow[]>('*')).map(userView);
  }

  async get(id: string): Promise<UserView> {
    return userView(await this.row(this.db, id));
  }

  async create(ctx: Context, actor: Principal, body: UserCreateBody): Promise<UserView> {
    if (body.org_role === 'owner') this.ownerOnly(actor, 'org_role');
    const passwordHash = body.password ? await hashPassword(body.password) : null;
    let row: UserRow;
    try {
      row = (
        await this.db('users')
          .insert({
            user_name: body.user_name,
            display_name: body.display_name || null,
            email: body.email ?? null,
            org_role: body.org_role,
            password_hash: passwordHash,
          })
          .returning('*')
      )[0]!;
    } catch (err) {
      if (isUniqueViolation(err)) throw userNameTaken();
      throw err;
    }
    const after = userView(row);
    await recordAudit(this.db, {
      actor,
      action: 'user.create',
      resourceType: 'user',
      resourceId: row.id,
      after,
      status: 200,
      details: { password_set: passwordHash !== null },
      ...auditOrigin(ctx),
    });
    return after;
  }

  async update(ctx: Context, actor: Principal, id: string, body: UserUpdateBody): Promise<UserView> {
    const passwordHash =
      typeof body.password === 'string' ? await hashPassword(body.password) : body.password;
    const { before, after } = await this.db.transaction(async (trx) => {
      const current = await this.row(trx, id, true);
      const demoted =
        current.org_role === 'owner' && body.org_role !== undefined && body.org_role !== 'owner';
      const deactivated = current.active && body.active === false;
      if (current.org_role === 'owner' || body.org_role === 'owner')
        this.ownerOnly(actor, body.org_role !== undefined ? 'org_role' : 'id');
      if (current.org_role === 'owner' && current.active && (demoted || deactivated))
        await this.keepAnOwner(trx, id);
      const changes: Record<string, unknown> = { updated_at: trx.fn.now() };
      if (body.display_name !== undefined) changes.display_name = body.display_name || null;
      if (body.email !== undefined) changes.email = body.email;
      if (body.org_role !== undefined) changes.org_role = body.org_role;
      if (body.active !== undefined) changes.active = body.active;
      if (passwordHash !== undefined) changes.password_hash = passwordHash;
      const row: UserRow = (await trx('users').where({ id }).update(changes).returning('*'))[0]!;
      // A deactivated user is signed out everywhere; a password set by someone else ends the old sessions too.
      if (deactivated || (passwordHash !== undefined && actor.userId !== id)) await endUserSessions(trx, id);
      return { before: userView(current), after: userView(row) };
    });
    await recordAudit(this.db, {
      actor,
      action: 'user.update',
      resourceType: 'user',
      resourceId: id,
      before,
      after,
      status: 200,
      ...(passwordHash !== undefined ? { details: { password_changed: true } } : {}),
      ...auditOrigin(ctx),
    });
    return after;
  }

  async delete(ctx: Context, actor: Principal, id: string): Promise<void> {
    const before = await this.db.transaction(async (trx) => {
      const current = await this.row(trx, id, true);
      if (current.org_role === 'owner') {
        this.ownerOnly(actor, 'id');
        if (current.active) await this.keepAnOwner(trx, id);
      }
      // Sessions, personal tokens and roles go with the row (ON DELETE CASCADE).
      await trx('users').where({ id }).delete();
      return userView(current);
    });
    await recordAudit(this.db, {
      actor,
      action: 'user.delete',
      resourceType: 'user',
      resourceId: id,
      before,
      status: 200,
      ...auditOrigin(ctx),
    });
  }

  private async row(db: Db, id: string, forUpdate = false): Promise<UserRow> {
    const q = db('users').where({ id }).first<UserRow | undefined>('*');
    const row = await (forUpdate ? q.forUpdate() : q);
    if (!row) throw new NotFoundError('user');
    return row;
  }

  private ownerOnly(actor: Principal, field: string): void {
    if (actor.orgRole !== 'owner')
      throw new ForbiddenError('only an owner may grant, remove or change the owner role', { field });
  }

  /** Refuses (409) when `leaving` is the only active owner; the owners are locked so two demotions cannot race. */
  private async keepAnOwner(trx: Db, leaving: string): Promise<void> {
    const owners = await trx('users')
      .where({ org_role: 'owner', active: true })
      .forUpdate()
      .pluck<string[]>('id');
    if (owners.filter((o) => o !== leaving).length === 0) throw lastOwner();
  }
}
