import type { Db } from '../../../core/db/knex.js';
import { ScimError } from './errors.js';
import type { Equality } from './filter.js';
import { applyFilter, type FilterColumn } from './store-filters.js';

/** The columns of `users` SCIM reads and writes. */
export interface ScimUserRow {
  id: string;
  user_name: string;
  display_name: string | null;
  email: string | null;
  external_id: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

/** What a SCIM request may set on a user. */
export type ScimUserFields = Partial<
  Pick<ScimUserRow, 'user_name' | 'display_name' | 'email' | 'external_id' | 'active'>
>;

export interface GroupRef {
  id: string;
  display_name: string;
}

const COLUMNS = [
  'id',
  'user_name',
  'display_name',
  'email',
  'external_id',
  'active',
  'created_at',
  'updated_at',
];

/** The attributes a Users filter may name, and their columns. */
export const USER_FILTERS: Record<string, FilterColumn> = {
  id: { column: 'id', uuid: true },
  username: { column: 'user_name', caseInsensitive: true },
  externalid: { column: 'external_id' },
  displayname: { column: 'display_name' },
  emails: { column: 'email', caseInsensitive: true },
  'emails.value': { column: 'email', caseInsensitive: true },
  active: { column: 'active', boolean: true },
};

/**
 * Refuses (409) to deactivate or delete the last active owner, as the users
 * API does: an identity provider unassigning the person who set the server
 * up must not leave it with nobody able to govern it. The owners are locked,
 * so two such changes cannot race.
 */
async function keepAnOwner(trx: Db, leaving: string): Promise<void> {
  const owners = await trx('users')
    .where({ org_role: 'owner', active: true })
    .forUpdate()
    .pluck<string[]>('id');
  if (owners.includes(leaving) && owners.length === 1)
    throw new ScimError(409, undefined, 'this is the last active owner: make another user owner first');
}

/** The SQL of SCIM's Users: the `users` rows, their sessions on deactivation, their groups. */
export class ScimUsersStore {
  constructor(private readonly db: Db) {}

  async list(
    filter: Equality[],
    offset: number,
    limit: number,
  ): Promise<{ total: number; rows: ScimUserRow[] }> {
    const base = this.db('users');
    applyFilter(base, filter, USER_FILTERS);
    const [counted] = await base.clone().count<Array<{ count: string }>>('* as count');
    const rows =
      limit === 0
        ? []
        : await base
            .clone()
            .select<ScimUserRow[]>(COLUMNS)
            .orderBy([{ column: 'created_at' }, { column: 'id' }])
            .offset(offset)
            .limit(limit);
    return { total: Number(counted?.count ?? 0), rows };
  }

  get(id: string, db: Db = this.db): Promise<ScimUserRow | undefined> {
    return db('users').where({ id }).first<ScimUserRow | undefined>(COLUMNS);
  }

  async insert(fields: ScimUserFields & { user_name: string }): Promise<ScimUserRow> {
    const [row] = await this.db('users').insert(fields).returning<ScimUserRow[]>(COLUMNS);
    return row!;
  }

  /**
   * Changes a user by what `change` makes of its row, read under a lock (two
   * PATCHes in turn, neither lost). One that stops being active loses its
   * console sessions in the same transaction (its API tokens are refused
   * while it is inactive: core/auth/credentials.ts reads `active` on every
   * request). Undefined when the user is gone.
   */
  update(
    id: string,
    change: (before: ScimUserRow) => ScimUserFields,
  ): Promise<{ before: ScimUserRow; after: ScimUserRow } | undefined> {
    return this.db.transaction(async (trx) => {
      const before = await trx('users').where({ id }).forUpdate().first<ScimUserRow | undefined>(COLUMNS);
      if (!before) return undefined;
      const fields = change(before);
      if (Object.keys(fields).length === 0) return { before, after: before };
      if (before.active && fields.active === false) await keepAnOwner(trx, id);
      const [after] = await trx('users')
        .where({ id })
        .update({ ...fields, updated_at: trx.fn.now() })
        .returning<ScimUserRow[]>(COLUMNS);
      if (before.active && !after!.active) await trx('user_sessions').where({ user_id: id }).delete();
      return { before, after: after! };
    });
  }

  /** Deletes a user; its sessions, tokens, project roles and group memberships go with it (cascade). */
  delete(id: string): Promise<ScimUserRow | undefined> {
    return this.db.transaction(async (trx) => {
      const row = await trx('users').where({ id }).forUpdate().first<ScimUserRow | undefined>(COLUMNS);
      if (!row) return undefined;
      if (row.active) await keepAnOwner(trx, id);
      await trx('users').where({ id }).delete();
      return row;
    });
  }

  /** Whether another user already has this user name (case-insensitively, as the unique index compares). */
  async userNameTaken(userName: string, exceptId?: string): Promise<boolean> {
    const q = this.db('users').whereRaw('lower(user_name) = lower(?)', [userName]);
    if (exceptId) void q.whereNot({ id: exceptId });
    return (await q.first('id')) !== undefined;
  }

  /** The groups of each user, for the read-only `groups` attribute. */
  async groupsOf(userIds: string[]): Promise<Map<string, GroupRef[]>> {
    const out = new Map<string, GroupRef[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return out;
    const rows = await this.db('user_group_members as m')
      .join('user_groups as g', 'g.id', 'm.group_id')
      .whereIn('m.user_id', userIds)
      .orderBy('g.display_name')
      .select<Array<GroupRef & { user_id: string }>>('m.user_id', 'g.id', 'g.display_name');
    for (const { user_id, ...group } of rows) out.get(user_id)!.push(group);
    return out;
  }
}
