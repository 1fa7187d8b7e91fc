/**
 * Attribute keys our own spans set beyond the OpenTelemetry conventions. The
 * ids are copied into columns of the spans table so traces can be filtered by
 * them (see span-row.ts).
 */
export const ATTR = {
  projectId: 'agent_server.project.id',
  /** The GenAI conventions name these two; we use their keys. */
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  virtualKeyId: 'agent_server.virtual_key.id',
  /** Cost of a model call in US dollars, when the caller knows the price (not an OpenTelemetry convention). */
  costUsd: 'gen_ai.usage.cost_usd',
} as const;
