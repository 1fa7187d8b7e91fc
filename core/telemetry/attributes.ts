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
  /**
   * On model and tool spans: whether prompts, completions, tool arguments and
   * results were recorded (the project's `record_content`, or OTEL_RECORD_CONTENT).
   */
  contentRecorded: 'agent_server.content.recorded',
  /** The `x-agent-server-client` request header (`console` for the web console's own calls). */
  client: 'agent_server.client',
} as const;

/** `agent_server.client` of the web console's own requests. */
export const CONSOLE_CLIENT = 'console';

/** GenAI content attributes (opt-in in the conventions: recorded only when content recording is on). */
export const CONTENT_ATTR = {
  input: 'gen_ai.input.messages',
  output: 'gen_ai.output.messages',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
} as const;
