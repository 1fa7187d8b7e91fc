import { ScimError } from './errors.js';
import { operationsOf, perAttribute, refuseReadOnly, type PatchOperation } from './patch.js';
import { USER_SCHEMA } from './urns.js';
import type { ScimUserFields, ScimUserRow } from './users-store.js';
import {
  booleanOf,
  lowerKeys,
  nameAsDisplayName,
  optionalText,
  primaryEmail,
  requiredText,
} from './values.js';

type Draft = Required<ScimUserFields>;

/**
 * A PatchOp on a User, applied in order to the columns it maps onto; the
 * columns that changed are returned. Name parts set without a display name
 * make one only when the user has none (a given name alone must not replace
 * "Ann Smith" with "Ann"). Attributes the table has no place for are accepted
 * and not kept, as a whole User's are.
 */
export function userPatch(current: ScimUserRow, body: unknown): ScimUserFields {
  const draft: Draft = {
    user_name: current.user_name,
    display_name: current.display_name,
    email: current.email,
    external_id: current.external_id,
    active: current.active,
  };
  const name: Record<string, unknown> = {};
  let displayNameSet = false;
  for (const operation of operationsOf(body, USER_SCHEMA))
    for (const { op, path, value } of perAttribute(operation, USER_SCHEMA)) {
      if (path === 'displayname') displayNameSet = true;
      // Okta's value-object form may repeat the id: allowed as it stands.
      if (path === 'id' && value === current.id) continue;
      applyOne(draft, name, op, path!, value);
    }
  if (!displayNameSet && draft.display_name === null && Object.keys(name).length > 0)
    draft.display_name = nameAsDisplayName(name);
  const changed: ScimUserFields = {};
  for (const key of Object.keys(draft) as Array<keyof Draft>)
    if (draft[key] !== current[key]) (changed as Record<string, unknown>)[key] = draft[key];
  return changed;
}

function applyOne(
  draft: Draft,
  name: Record<string, unknown>,
  op: PatchOperation['op'],
  path: string,
  value: unknown,
): void {
  refuseReadOnly(path);
  const remove = op === 'remove';
  if (path === 'groups' || path.startsWith('groups[') || path.startsWith('groups.'))
    throw new ScimError(400, 'mutability', "a user's groups are changed through Groups");
  if (path === 'username') {
    if (remove) throw new ScimError(400, 'mutability', 'userName is required and cannot be removed');
    draft.user_name = requiredText(value, 'userName');
  } else if (path === 'displayname')
    draft.display_name = remove ? null : (optionalText(value, 'displayName') ?? null);
  else if (path === 'externalid')
    draft.external_id = remove ? null : (optionalText(value, 'externalId') ?? null);
  else if (path === 'active') {
    if (remove) throw new ScimError(400, 'mutability', 'active cannot be removed; set it to false');
    draft.active = booleanOf(value, 'active');
  } else if (path === 'name') {
    if (!remove) Object.assign(name, lowerKeys(value, 'name'));
  } else if (path.startsWith('name.')) {
    if (!remove) name[path.slice('name.'.length)] = value;
  } else if (path === 'emails' || path.startsWith('emails[') || path.startsWith('emails.'))
    draft.email = remove ? null : primaryEmail(value);
  else if (!path.startsWith('urn:') && !KNOWN_UNKEPT.has(path.split(/[.[]/)[0]!))
    throw new ScimError(400, 'invalidPath', `no attribute ${path} on a User`);
}

/**
 * Attributes of the core User schema the table has no place for: accepted so
 * an identity provider's default mappings (Entra ID sends title and phone
 * numbers) do not fail, and not kept. Anything else is a mistake, refused.
 */
const KNOWN_UNKEPT = new Set([
  'nickname',
  'profileurl',
  'title',
  'usertype',
  'preferredlanguage',
  'locale',
  'timezone',
  'password',
  'phonenumbers',
  'ims',
  'photos',
  'addresses',
  'entitlements',
  'roles',
  'x509certificates',
]);
