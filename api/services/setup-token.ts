import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import type { Logger } from '../../core/logger.js';
import { hasUsers, issueSetupToken } from '../../core/auth/first-owner.js';

const HOW = '(POST /api/agent-server/auth/setup or the console)';

/**
 * Users mode with nobody in it: the way in is a one-time setup token, never a
 * default password. Without AUTH_SETUP_TOKEN, each replica that starts with
 * zero users stores a fresh one and logs it once; any of them works, and all
 * are deleted when the first owner exists.
 */
export async function announceSetupToken(db: Db, config: Config, logger: Logger): Promise<void> {
  if (config.auth.mode !== 'users' || (await hasUsers(db))) return;
  if (config.auth.setupToken) {
    logger.warn(`no users yet: create the first owner with AUTH_SETUP_TOKEN as the setup token ${HOW}`);
    return;
  }
  const token = await issueSetupToken(db);
  logger.warn(`no users yet: create the first owner with this setup token: ${token} ${HOW}`);
}
