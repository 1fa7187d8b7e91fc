import { ScimError, invalidValue } from './errors.js';
import type { MemberRef, ScimGroupFields, ScimGroupRow } from './groups-store.js';
import { operationsOf, perAttribute, refuseReadOnly } from './patch.js';
import { GROUP_SCHEMA } from './urns.js';
import { lowerKeys, optionalText, requiredText } from './values.js';

/**
 * A group as a SCIM Group (RFC 7643 §4.2). Its displayName is the name
 * AUTH_GROUP_ROLES maps to roles; its members are users.
 */
export function groupResource(
  row: ScimGroupRow,
  members: MemberRef[],
  location: (path: string) => string,
): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.display_name,
    members: members.map((m) => ({
      value: m.id,
      display: m.user_name,
      type: 'User',
      $ref: location(`/Users/${m.id}`),
    })),
    meta: {
      resourceType: 'Group',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: location(`/Groups/${row.id}`),
    },
  };
}

/** The user ids of a `members` value: `[{"value": "<id>"}, …]` (a single object is taken too). */
export function memberIdsOf(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((m) => {
    const id = lowerKeys(m, 'a member').value;
    if (typeof id !== 'string' || id === '')
      throw invalidValue('each member needs a value: the id of a user');
    return id;
  });
}

/** The columns and members a whole Group sets (POST, PUT): what it leaves out is cleared. */
export function groupFieldsOf(body: unknown): {
  fields: ScimGroupFields & { display_name: string };
  members: string[];
} {
  const group = lowerKeys(body, 'the group');
  return {
    fields: {
      display_name: requiredText(group.displayname, 'displayName'),
      external_id: optionalText(group.externalid, 'externalId') ?? null,
    },
    members: memberIdsOf(group.members),
  };
}

/** `members[value eq "<id>"]`: the one member a path names. */
const MEMBER_PATH = /^members\[\s*value\s+eq\s+("(?:[^"\\]|\\.)*")\s*\]$/;

/** One operation of a Group's PatchOp, by attribute. */
interface GroupOperation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value: unknown;
}

/** A Group's PatchOp, read (and checked) before anything is applied. */
export function groupOperations(body: unknown): GroupOperation[] {
  const out: GroupOperation[] = [];
  for (const operation of operationsOf(body, GROUP_SCHEMA))
    for (const o of perAttribute(operation, GROUP_SCHEMA)) {
      refuseReadOnlyOrSame(o.path!, o.value);
      out.push({ op: o.op, path: o.path!, value: o.value });
    }
  return out;
}

/** Okta's value-object replace repeats the group's `id`: allowed as it stands, refused if it would change. */
function refuseReadOnlyOrSame(path: string, value: unknown): void {
  if (path === 'id' && typeof value === 'string') return;
  refuseReadOnly(path);
}

/** The user ids a PatchOp would add (checked to exist before it is applied). */
export function addedMembers(operations: GroupOperation[]): string[] {
  return operations
    .filter((o) => o.op !== 'remove' && o.path === 'members')
    .flatMap((o) => memberIdsOf(o.value));
}

/**
 * Applies a Group's PatchOp, in order, to its columns and member list:
 * members added, removed (by value list, by `members[value eq "…"]`, or all
 * with a bare `members` path) or replaced; displayName and externalId set.
 */
export function applyGroupPatch(
  current: ScimGroupRow,
  held: string[],
  operations: GroupOperation[],
): { fields: ScimGroupFields; members: string[] } {
  const fields: ScimGroupFields = {};
  const members = new Set(held);
  for (const { op, path, value } of operations) {
    const one = MEMBER_PATH.exec(path);
    if (path === 'id') {
      if (value !== current.id) throw new ScimError(400, 'mutability', 'id cannot be changed');
    } else if (one) {
      if (op !== 'remove')
        throw new ScimError(400, 'invalidPath', 'a single member can only be removed; add members by value');
      members.delete(JSON.parse(one[1]!) as string);
    } else if (path === 'members') {
      const ids = memberIdsOf(value);
      if (op === 'replace') members.clear();
      if (op === 'remove' && ids.length === 0) members.clear();
      for (const id of ids) {
        if (op === 'remove') members.delete(id);
        else members.add(id);
      }
    } else if (path === 'displayname') {
      if (op === 'remove')
        throw new ScimError(400, 'mutability', 'displayName is required and cannot be removed');
      fields.display_name = requiredText(value, 'displayName');
    } else if (path === 'externalid')
      fields.external_id = op === 'remove' ? null : (optionalText(value, 'externalId') ?? null);
    else if (!path.startsWith('urn:'))
      throw new ScimError(400, 'invalidPath', `no attribute ${path} on a Group`);
  }
  return { fields, members: [...members] };
}
