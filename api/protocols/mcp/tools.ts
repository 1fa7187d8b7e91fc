import type { Tool } from '@modelcontextprotocol/server';
import type { ExposedAgent } from '../../../core/repositories/exposed-agents.repository.js';

/** MCP's tool-name rule (2025-11-25 onward): 1–128 of `A-Z a-z 0-9 _ . -`. */
const TOOL_NAME_MAX = 128;
const NOT_IN_NAME = /[^A-Za-z0-9_.-]/g;

/** What a tool call's `arguments` hold: one user message, and the conversation to continue. */
export const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    message: {
      type: 'string',
      minLength: 1,
      description: 'The user message for the agent: one turn of its conversation',
    },
    conversation_id: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9._:-]+$',
      description:
        "Continue this conversation (an earlier answer's conversation_id); absent: a new conversation",
    },
  },
  required: ['message'],
  additionalProperties: false,
} as const;

/** One agent as a tool: the name it is called by, and what tools/list shows. */
export interface AgentTool {
  agent: ExposedAgent;
  name: string;
  /** The agent's schema when MCP can carry it as `outputSchema` (an object at the root). */
  outputSchema: Record<string, unknown> | undefined;
}

function sanitised(name: string): string {
  return name.replace(NOT_IN_NAME, '_').slice(0, TOOL_NAME_MAX) || 'agent';
}

/**
 * The agents as tools, named after each agent with what the tool-name rule
 * refuses made `_`. Names that come out the same (`my agent`, `my_agent`)
 * each get the start of their agent's id, so a name never changes meaning
 * with the order agents were made in.
 */
export function agentTools(agents: ExposedAgent[]): AgentTool[] {
  const counts = new Map<string, number>();
  for (const a of agents) counts.set(sanitised(a.name), (counts.get(sanitised(a.name)) ?? 0) + 1);
  return agents.map((agent) => {
    const base = sanitised(agent.name);
    const suffix = `_${agent.id.slice(0, 8)}`;
    const name = counts.get(base)! > 1 ? base.slice(0, TOOL_NAME_MAX - suffix.length) + suffix : base;
    const schema = agent.schema;
    const outputSchema = schema && schema.type === 'object' ? schema : undefined;
    return { agent, name, outputSchema };
  });
}

/** The input schema: `message` optional, with its default, for an agent that has one. */
function inputSchema(agent: ExposedAgent): Tool['inputSchema'] {
  if (!agent.mcpMessage) return INPUT_SCHEMA as unknown as Tool['inputSchema'];
  const { required: _required, ...rest } = INPUT_SCHEMA;
  return {
    ...rest,
    properties: {
      ...INPUT_SCHEMA.properties,
      message: { ...INPUT_SCHEMA.properties.message, default: agent.mcpMessage },
    },
  };
}

/** The tool as tools/list shows it. */
export function toolDefinition(tool: AgentTool): Tool {
  const { agent } = tool;
  return {
    name: tool.name,
    title: agent.name,
    description: agent.description?.trim() || `Ask the agent "${agent.name}"`,
    inputSchema: inputSchema(agent),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
  };
}

/** The call's arguments, checked; a problem names the field. `defaultMessage`: the agent's, for a call without one. */
export function callArguments(
  args: Record<string, unknown> | undefined,
  defaultMessage?: string | null,
): { message: string; conversationId?: string } | { problem: string } {
  const given = args ?? {};
  const a = given.message === undefined && defaultMessage ? { ...given, message: defaultMessage } : given;
  const extra = Object.keys(a).filter((k) => !(k in INPUT_SCHEMA.properties));
  if (extra.length) return { problem: `unknown argument ${extra.map((k) => `"${k}"`).join(', ')}` };
  if (typeof a.message !== 'string' || a.message.trim() === '')
    return { problem: '"message" is required: the user message for the agent (a non-empty string)' };
  const cid = a.conversation_id;
  if (cid === undefined) return { message: a.message };
  if (
    typeof cid !== 'string' ||
    !new RegExp(INPUT_SCHEMA.properties.conversation_id.pattern).test(cid) ||
    cid.length > 128
  )
    return {
      problem:
        '"conversation_id" must be 1–128 letters, digits or . _ : - (an earlier answer\'s conversation_id)',
    };
  return { message: a.message, conversationId: cid };
}
