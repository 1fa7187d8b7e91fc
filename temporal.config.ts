/**
 * Temporal settings shared by the API (client), the worker and workflow code.
 * Pure data and pure functions only: workflow code imports this file, so it must
 * not touch Node built-ins or process.env.
 */

/** Custom search attributes registered on the namespace; all Keyword. */
export const searchAttributes = {
  ProjectId: 'Keyword',
  AgentId: 'Keyword',
  ConversationId: 'Keyword',
  Namespace: 'Keyword',
} as const;

/** One session workflow per agent and conversation. */
export const sessionWorkflowId = (agentId: string, conversationId: string) =>
  `session/${agentId}/${conversationId}`;

/** The agent of a session workflow id (`session/<agent_id>/<conversation_id>`), or undefined. */
export function agentOfSessionWorkflowId(workflowId: string): string | undefined {
  return /^session\/([^/]+)\//.exec(workflowId)?.[1];
}

/** By our key, not the client's id: a conversation recreated under the same id is another deletion. */
export const deleteConversationWorkflowId = (conversationPk: string) =>
  `conversation-delete/${conversationPk}`;

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function temporalSettings(cfg: {
  temporalAddress?: string | undefined;
  temporalNamespace: string;
  temporalTaskQueue: string;
}): TemporalSettings {
  if (!cfg.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  return { address: cfg.temporalAddress, namespace: cfg.temporalNamespace, taskQueue: cfg.temporalTaskQueue };
}

/** Retry policy for activities doing I/O against our own services (Postgres, the sandbox daemon). */
export const defaultRetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 10,
} as const;

/** Default activity options; individual activities override what they need. */
export const activityDefaults = {
  /** Reads and writes of transcripts and run state. */
  persistence: { startToCloseTimeout: '30 seconds', retry: defaultRetryPolicy },
  /** Model calls: long generations, retried with backoff; permanent failures are non-retryable by type. */
  modelCall: {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { ...defaultRetryPolicy, maximumAttempts: 5 },
  },
  /** Tool calls (MCP, sandbox): bounded by their own timeouts. */
  toolCall: {
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { ...defaultRetryPolicy, maximumAttempts: 3 },
  },
} as const;
