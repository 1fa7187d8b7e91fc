import type { Db } from '../core/db/knex.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../core/config.js';
import type { SecretBox } from '../core/crypto/secrets.js';
import type { GatewayPolicyService } from '../core/metering/gateway-policy.js';
import type { Client } from '@temporalio/client';
import type { SandboxManager } from './sandbox/sandbox-manager.js';
import { createEvalActivities } from './evals/eval-activities.js';
import { createConversationDeleteActivities } from './session/conversation-delete.js';
import { createSessionActivities } from './session/session-activities.js';
import { createWorkspaceCopyActivities } from './session/workspace-copy.js';
import { createWebhookDeliveryActivities } from './webhooks/delivery.js';
import { createCronActivities } from './turns/cron-activities.js';
import { createTurnActivities } from './turns/turn-activities.js';
import { createSubAgentActivities } from './turns/sub-agent-activities.js';

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
  /** On the worker's connection: deleting a conversation terminates and deletes its session workflows. */
  temporal?: Client;
}

/**
 * Activities are plain async functions closing over their dependencies.
 * Workflows import `typeof createActivities` as a type only.
 */
export function createActivities(deps: ActivityDeps) {
  const turns = createTurnActivities(deps);
  return {
    ...createSessionActivities(deps),
    ...createConversationDeleteActivities(deps),
    ...createWebhookDeliveryActivities(deps),
    ...createEvalActivities(deps),
    ...createWorkspaceCopyActivities(deps),
    ...turns,
    ...createCronActivities(deps, turns),
    ...createSubAgentActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
