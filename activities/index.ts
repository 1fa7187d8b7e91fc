import type { Db } from '../api/db/knex.js';
import type { Logger } from '../api/logger.js';
import type { Config } from '../api/config.js';
import type { SandboxManager } from './sandbox/sandbox-manager.js';

/** What activities close over; built once per worker process. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** Disabled (every call fails with "sandbox backend is not configured") unless SANDBOX_ENABLED. */
  sandbox: SandboxManager;
}

/**
 * Activities are plain async functions closing over their dependencies.
 * Workflows import `typeof createActivities` as a type only.
 */
export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
