import type { GroupRef, ScimUserFields, ScimUserRow } from './users-store.js';
import { USER_SCHEMA } from './urns.js';
import {
  booleanOf,
  lowerKeys,
  nameAsDisplayName,
  optionalText,
  primaryEmail,
  requiredText,
} from './values.js';

/**
 * A user as a SCIM User (RFC 7643 §4.1). The users table keeps one display
 * name and one email: `name` comes back as `formatted` (the display name),
 * `emails` as the one primary address. `groups` is read-only here (changed
 * through Groups).
 */
export function userResource(
  row: ScimUserRow,
  groups: GroupRef[],
  location: (path: string) => string,
): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.user_name,
    ...(row.display_name !== null
      ? { displayName: row.display_name, name: { formatted: row.display_name } }
      : {}),
    ...(row.email !== null ? { emails: [{ value: row.email, type: 'work', primary: true }] } : {}),
    active: row.active,
    groups: groups.map((g) => ({ value: g.id, display: g.display_name, $ref: location(`/Groups/${g.id}`) })),
    meta: {
      resourceType: 'User',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: location(`/Users/${row.id}`),
    },
  };
}

/**
 * The columns a whole User sets (POST, PUT). What it leaves out is cleared,
 * except `active`, which stays as it is (a PUT that forgot it must not
 * reactivate anyone). Attributes the table has no place for (phone numbers,
 * addresses, the enterprise extension, a password) are accepted and not kept.
 */
export function userFieldsOf(body: unknown): ScimUserFields & { user_name: string } {
  const user = lowerKeys(body, 'the user');
  const displayName = optionalText(user.displayname, 'displayName');
  return {
    user_name: requiredText(user.username, 'userName'),
    display_name: displayName ?? nameAsDisplayName(user.name),
    email: primaryEmail(user.emails),
    external_id: optionalText(user.externalid, 'externalId') ?? null,
    ...(user.active !== undefined ? { active: booleanOf(user.active, 'active') } : {}),
  };
}
