/**
 * The tools a turn offers its model: the agent's MCP servers' tools (listed
 * once per turn) and the sandbox's `execute_bash_commands` (docs/interface.md#the-sandbox-tool). What was
 * offered, and why, is recorded on the run (`runs.tools`); the model's calls
 * are sorted here into what the workflow runs, asks a person about, or
 * answers with an error. Pure functions: no I/O.
 */
import type { ToolCall, ToolDefinition } from '../../core/llm/types.js';
import type { McpServerListing, OfferedMcpTool } from '../tools/mcp-tools.js';
import { MEMORY_TOOLS } from '../tools/memory-tools.js';
import type { ToolCallPlan } from '../../workflows/session.definitions.js';
import {
  subAgentCallPlan,
  SUB_AGENT_INPUT_SCHEMA,
  type SubAgentLimits,
  type SubAgentOffer,
} from './sub-agents.js';

export const SANDBOX_TOOL_NAME = 'execute_bash_commands';

/** One required string parameter, run through a shell so pipes and redirections work. */
export const SANDBOX_TOOL: ToolDefinition = {
  name: SANDBOX_TOOL_NAME,
  description:
    "Executes a bash command in this conversation's sandbox and returns its output as JSON " +
    '{stdout, stderr, exit_code, duration_ms}. Pipes and redirections work. The working directory ' +
    '/sandbox/workspace persists between calls of this conversation; other paths (such as /tmp) may not.',
  parameters: {
    type: 'object',
    properties: { code: { type: 'string', description: 'The shell command to run.' } },
    required: ['code'],
    additionalProperties: false,
  },
};

/** What the sandbox contributes to a turn, and why. */
export interface SandboxToolState {
  offered: boolean;
  require_approval: boolean;
  /** Why the tool is not offered, when it is not. */
  reason?: string;
}

/** The `runs.tools` record: the tools the model could see this turn, where each came from, and why. */
export interface RunTools {
  offered: Array<{
    name: string;
    /**
     * `memory`: the project's memory store (agent `memory_tools`), run by `runMcpTool` like an MCP call;
     * `sub_agent`: another agent of the project (agent `sub_agents`), run in a conversation of its own.
     */
    kind: 'mcp' | 'sandbox' | 'memory' | 'sub_agent' | 'a2a';
    description?: string;
    input_schema: Record<string, unknown>;
    requires_approval: boolean;
    server_id?: string;
    server_name?: string;
    /** The MCP server's own name for the tool (when `name` had to be made unique). */
    tool?: string;
    /** A sub-agent's tool: the agent it calls. */
    agent_id?: string;
  }>;
  servers: McpServerListing[];
  sandbox: SandboxToolState;
  /** Where the turn stands against the sub-agent limits, when it offers sub-agents. */
  sub_agents?: SubAgentLimits;
}

export function runToolsRecord(
  sandbox: SandboxToolState,
  mcp: { tools: OfferedMcpTool[]; servers: McpServerListing[] } = { tools: [], servers: [] },
  memory = false,
  subAgents?: SubAgentOffer,
): RunTools {
  return {
    offered: [
      ...(memory
        ? MEMORY_TOOLS.map((t) => ({
            name: t.name,
            kind: 'memory' as const,
            description: t.description!,
            input_schema: t.parameters,
            requires_approval: false,
          }))
        : []),
      ...(sandbox.offered
        ? [
            {
              name: SANDBOX_TOOL.name,
              kind: 'sandbox' as const,
              description: SANDBOX_TOOL.description!,
              input_schema: SANDBOX_TOOL.parameters,
              requires_approval: sandbox.require_approval,
            },
          ]
        : []),
      ...mcp.tools.map((t) => ({
        name: t.name,
        kind: 'mcp' as const,
        ...(t.description !== undefined ? { description: t.description } : {}),
        input_schema: t.input_schema,
        requires_approval: t.requires_approval,
        server_id: t.server_id,
        server_name: t.server_name,
        tool: t.tool,
      })),
      ...(subAgents?.tools ?? []).map((t) => ({
        name: t.name,
        kind: 'sub_agent' as const,
        description: t.description,
        input_schema: SUB_AGENT_INPUT_SCHEMA,
        // Plans pinned before sub-agents could ask for approval carry no flag.
        requires_approval: t.requires_approval ?? false,
        agent_id: t.agent_id,
      })),
    ],
    servers: mcp.servers,
    sandbox,
    ...(subAgents ? { sub_agents: subAgents.limits } : {}),
  };
}

/** What the sandbox tool is this turn, and why (from the turn's plan). */
export function sandboxState(plan: {
  sandbox_enabled: boolean;
  sandbox_requested: boolean;
  sandbox_require_approval: boolean;
}): SandboxToolState {
  return {
    offered: plan.sandbox_enabled,
    require_approval: plan.sandbox_require_approval,
    ...(plan.sandbox_requested && !plan.sandbox_enabled
      ? { reason: 'this server has no sandbox backend (SANDBOX_ENABLED is unset)' }
      : !plan.sandbox_requested
        ? { reason: 'the agent does not enable the sandbox' }
        : {}),
  };
}

/** The definitions sent to the model. */
export function toolDefinitions(tools: RunTools | null): ToolDefinition[] {
  return (tools?.offered ?? []).map((t) => ({
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    parameters: t.input_schema,
  }));
}

/** Parses a call's JSON arguments; a non-object is an error the model should hear about. */
export function parseArguments(call: ToolCall): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(call.arguments || '{}');
  } catch (err) {
    return `the arguments of "${call.name}" are not valid JSON: ${(err as Error).message}`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `the arguments of "${call.name}" must be a JSON object`;
  return value as Record<string, unknown>;
}

/**
 * Sorts a step's calls, in the model's order: which tool each one runs,
 * whether it waits for approval, and (for calls that cannot run) the answer
 * the model gets instead. Sandbox calls carry their command, so it shows in
 * the workflow's history.
 */
export function planToolCalls(tools: RunTools | null, calls: ToolCall[]): ToolCallPlan[] {
  return calls.map((call): ToolCallPlan => {
    const offered = tools?.offered.find((t) => t.name === call.name);
    if (!offered)
      return {
        id: call.id,
        name: call.name,
        kind: 'invalid',
        approval: false,
        error: `tool "${call.name}" is not available to this agent${
          tools?.offered.length ? ` (available: ${tools.offered.map((t) => t.name).join(', ')})` : ''
        }`,
      };
    const args = parseArguments(call);
    if (typeof args === 'string')
      return { id: call.id, name: call.name, kind: 'invalid', approval: false, error: args };
    if (offered.kind === 'sandbox') {
      if (typeof args.code !== 'string' || args.code.trim() === '')
        return {
          id: call.id,
          name: call.name,
          kind: 'invalid',
          approval: false,
          error: `"${SANDBOX_TOOL_NAME}" needs a non-empty string parameter "code"`,
        };
      return {
        id: call.id,
        name: call.name,
        kind: 'sandbox',
        approval: offered.requires_approval,
        command: args.code,
      };
    }
    if (offered.kind === 'sub_agent') return subAgentCallPlan(call, offered, args, tools?.sub_agents);
    // Memory tools run in runMcpTool's activity: the workflow knows MCP and sandbox calls only.
    return { id: call.id, name: call.name, kind: 'mcp', approval: offered.requires_approval };
  });
}
