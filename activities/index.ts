import type { Db } from '../api/db/knex.js';
import type { Logger } from '../api/logger.js';
import type { Config } from '../api/config.js';
import type { SecretBox } from '../api/crypto/secrets.js';
import type { GatewayPolicyService } from '../api/services/gateway-policy.service.js';
import type { SandboxManager } from './sandbox/sandbox-manager.js';
import { createSessionActivities } from './session/session-activities.js';

/** What activities close over; built once per worker process. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** Decrypts provider keys just for the model call. */
  secrets: SecretBox;
  /** The project's virtual key limits and budget, shared with the gateway. */
  policy: GatewayPolicyService;
  /** Disabled (every call fails with "sandbox backend is not configured") unless SANDBOX_ENABLED. */
  sandbox: SandboxManager;
}

/**
 * Activities are plain async functions closing over their dependencies.
 * Workflows import `typeof createActivities` as a type only.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createSessionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
