import { randomUUID } from 'node:crypto';
import type { Db } from '../../core/db/knex.js';
import type { OrgRole, ProjectRole } from '../../core/auth/roles.js';
import { credentialDigest, newCredential } from '../../core/auth/secrets.js';

/**
 * Users and credentials written straight to the database, for tests of users
 * mode that are not about how users are made (the users API has its own).
 */
export interface TestUser {
  id: string;
  userName: string;
  /** A personal API token acting as the user (no narrower scope). */
  token: string;
}

export async function createTestUser(
  db: Db,
  opts: { orgRole?: OrgRole; projects?: Record<string, ProjectRole>; userName?: string } = {},
): Promise<TestUser> {
  const userName = opts.userName ?? `user-${randomUUID().slice(0, 8)}@example.test`;
  const [row] = await db('users')
    .insert({ user_name: userName, org_role: opts.orgRole ?? 'member' })
    .returning<Array<{ id: string }>>('id');
  const id = row!.id;
  for (const [projectId, role] of Object.entries(opts.projects ?? {}))
    await db('project_roles').insert({ user_id: id, project_id: projectId, role });
  const token = await createTestToken(db, { userId: id });
  return { id, userName, token };
}

/** A personal token of `userId`, or a service token when no user is given. */
export async function createTestToken(
  db: Db,
  opts: {
    userId?: string;
    orgRole?: OrgRole;
    projects?: Record<string, ProjectRole>;
    expiresAt?: Date;
    name?: string;
  },
): Promise<string> {
  const kind = opts.userId ? 'personal' : 'service';
  const secret = newCredential(kind);
  await db('api_tokens').insert({
    name: opts.name ?? `${kind} token`,
    kind,
    user_id: opts.userId ?? null,
    token_hash: credentialDigest(secret),
    token_prefix: secret.slice(0, 12),
    org_role: opts.orgRole ?? null,
    project_roles: opts.projects ? JSON.stringify(opts.projects) : null,
    expires_at: opts.expiresAt ?? null,
  });
  return secret;
}
