import type { Knex } from 'knex';
import type { Db } from '../../../core/db/knex.js';
import type { Equality } from './filter.js';
import { applyFilter, isUuid, type FilterColumn } from './store-filters.js';

/** The columns of `user_groups` SCIM reads and writes. */
export interface ScimGroupRow {
  id: string;
  display_name: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ScimGroupFields = Partial<Pick<ScimGroupRow, 'display_name' | 'external_id'>>;

export interface MemberRef {
  id: string;
  user_name: string;
}

const COLUMNS = ['id', 'display_name', 'external_id', 'created_at', 'updated_at'];

/**
 * The attributes a Groups filter may name. displayName compares exactly:
 * it is the name AUTH_GROUP_ROLES maps to roles, and "Eng" is not "eng" there.
 */
export const GROUP_FILTERS: Record<string, FilterColumn> = {
  id: { column: 'id', uuid: true },
  displayname: { column: 'display_name' },
  externalid: { column: 'external_id' },
};

/** `members eq "<user id>"` (Entra ID asks whether a user is in a group so). */
const byMember = (q: Knex.QueryBuilder, value: Equality['value']) => {
  if (!isUuid(value)) return void q.whereRaw('false');
  void q.whereExists((sub) =>
    sub.from('user_group_members as m').whereRaw('m.group_id = user_groups.id').where('m.user_id', value),
  );
};
export const MEMBER_FILTERS = { members: byMember, 'members.value': byMember };

/** The SQL of SCIM's Groups: `user_groups` and their members (users). */
export class ScimGroupsStore {
  constructor(private readonly db: Db) {}

  async list(
    filter: Equality[],
    offset: number,
    limit: number,
  ): Promise<{ total: number; rows: ScimGroupRow[] }> {
    const base = this.db('user_groups');
    applyFilter(base, filter, GROUP_FILTERS, MEMBER_FILTERS);
    const [counted] = await base.clone().count<Array<{ count: string }>>('* as count');
    const rows =
      limit === 0
        ? []
        : await base
            .clone()
            .select<ScimGroupRow[]>(COLUMNS)
            .orderBy([{ column: 'created_at' }, { column: 'id' }])
            .offset(offset)
            .limit(limit);
    return { total: Number(counted?.count ?? 0), rows };
  }

  get(id: string): Promise<ScimGroupRow | undefined> {
    return this.db('user_groups').where({ id }).first<ScimGroupRow | undefined>(COLUMNS);
  }

  async displayNameTaken(displayName: string, exceptId?: string): Promise<boolean> {
    const q = this.db('user_groups').where({ display_name: displayName });
    if (exceptId) void q.whereNot({ id: exceptId });
    return (await q.first('id')) !== undefined;
  }

  /** The ids among `ids` that name no user. */
  async unknownUsers(ids: string[]): Promise<string[]> {
    const valid = ids.filter(isUuid);
    const found = new Set(
      valid.length ? await this.db('users').whereIn('id', valid).pluck<string[]>('id') : [],
    );
    return ids.filter((id) => !found.has(id));
  }

  /** The members of each group, for the `members` attribute. */
  async membersOf(groupIds: string[]): Promise<Map<string, MemberRef[]>> {
    const out = new Map<string, MemberRef[]>(groupIds.map((id) => [id, []]));
    if (groupIds.length === 0) return out;
    const rows = await this.db('user_group_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .whereIn('m.group_id', groupIds)
      .orderBy('u.user_name')
      .select<Array<MemberRef & { group_id: string }>>('m.group_id', 'u.id', 'u.user_name');
    for (const { group_id, ...member } of rows) out.get(group_id)!.push(member);
    return out;
  }

  async insert(fields: ScimGroupFields & { display_name: string }, members: string[]): Promise<ScimGroupRow> {
    return this.db.transaction(async (trx) => {
      const [row] = await trx('user_groups').insert(fields).returning<ScimGroupRow[]>(COLUMNS);
      if (members.length > 0)
        await trx('user_group_members').insert(members.map((user_id) => ({ group_id: row!.id, user_id })));
      return row!;
    });
  }

  /**
   * Changes a group and makes its members exactly `members`; the group is
   * locked so two changes to one group apply in turn. A change that changes
   * nothing writes nothing (`after` is then `before`). Undefined when the
   * group is gone.
   */
  update(
    id: string,
    change: (before: ScimGroupRow, members: string[]) => { fields: ScimGroupFields; members: string[] },
  ): Promise<
    { before: ScimGroupRow & { members: string[] }; after: ScimGroupRow & { members: string[] } } | undefined
  > {
    return this.db.transaction(async (trx) => {
      const before = await trx('user_groups')
        .where({ id })
        .forUpdate()
        .first<ScimGroupRow | undefined>(COLUMNS);
      if (!before) return undefined;
      const held = await trx('user_group_members').where({ group_id: id }).pluck<string[]>('user_id');
      const { fields, members } = change(before, held);
      const keep = new Set(members);
      const gone = held.filter((u) => !keep.has(u));
      const added = members.filter((u) => !held.includes(u));
      const same = { ...before, members: held };
      const unchanged = (Object.keys(fields) as Array<keyof ScimGroupFields>).every(
        (k) => fields[k] === before[k],
      );
      if (unchanged && gone.length === 0 && added.length === 0) return { before: same, after: same };
      const [after] = await trx('user_groups')
        .where({ id })
        .update({ ...fields, updated_at: trx.fn.now() })
        .returning<ScimGroupRow[]>(COLUMNS);
      if (gone.length > 0)
        await trx('user_group_members').where({ group_id: id }).whereIn('user_id', gone).delete();
      if (added.length > 0)
        await trx('user_group_members')
          .insert(added.map((user_id) => ({ group_id: id, user_id })))
          .onConflict(['group_id', 'user_id'])
          .ignore();
      return { before: { ...before, members: held }, after: { ...after!, members } };
    });
  }

  /** Deletes a group; its memberships go with it, and the roles it gave with them. */
  async delete(id: string): Promise<ScimGroupRow | undefined> {
    const [row] = await this.db('user_groups').where({ id }).delete().returning<ScimGroupRow[]>(COLUMNS);
    return row;
  }
}
