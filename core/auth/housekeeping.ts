import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';

/**
 * Console sessions and single sign-on flows past their expiry: no credential
 * check reads them again (both filter on `expires_at`), so they are only
 * deleted here, in chunks, one replica at a time. Expired API tokens stay:
 * their owners still see them listed, with their expiry.
 */
export async function pruneExpiredSignIns(db: Db, chunk = 10_000): Promise<number> {
  const sessions = await deleteInChunks(
    db,
    'agent-server:prune-user-sessions',
    'delete from user_sessions where id in (select id from user_sessions where expires_at < ? limit ?)',
    [new Date()],
    chunk,
  );
  const flows = await deleteInChunks(
    db,
    'agent-server:prune-oidc-login-flows',
    'delete from oidc_login_flows where state in (select state from oidc_login_flows where expires_at < ? limit ?)',
    [new Date()],
    chunk,
  );
  return sessions + flows;
}
