/**
 * Sub-agents as tools: an agent lists other agents of its project
 * (`sub_agents`), and its model sees each as a tool `agent__<name>` taking
 * `{message}`. A call runs that agent's turn in a conversation of its own
 * (workflows/sub-agent-call.workflow.ts); its answer is the tool's result.
 *
 * What a turn offers is resolved with its plan (the agents as they are at
 * the turn's start) together with the limits that apply to it: how deep it
 * is below a turn a client started (SUB_AGENT_MAX_DEPTH) and how many calls
 * it may make (SUB_AGENT_MAX_FANOUT). A call over a limit is answered with an
 * error the model can act on; it never fails the turn.
 */
import type { ToolCall } from '../../core/llm/types.js';
import { SubAgentsRepository } from '../../core/repositories/sub-agents.repository.js';
import type { ToolCallPlan } from '../../workflows/session.definitions.js';
import { sanitizeToolName } from '../tools/tool-names.js';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import type { SubAgentEntry } from '../../core/db/tables/index.js';

/** The prefix of a sub-agent's tool name: MCP tools that would clash are renamed instead (reserved names). */
export const SUB_AGENT_TOOL_PREFIX = 'agent__';

/** What the model passes: the task, self-contained (the sub-agent sees nothing else of this conversation). */
export const SUB_AGENT_INPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    message: {
      type: 'string',
      description:
        'The task or question for this agent, self-contained: it sees nothing else of this conversation.',
    },
  },
  required: ['message'],
  additionalProperties: false,
};

/** One sub-agent as the turn offers it. */
export interface SubAgentTool {
  /** The tool's name as the model sees it. */
  name: string;
  agent_id: string;
  agent_name: string;
  description: string;
  /** Each call waits for a person's approval first. */
  requires_approval: boolean;
}

/** Where the turn stands against the limits. */
export interface SubAgentLimits {
  /** Sub-agent calls above this turn (0: a turn a client started). */
  depth: number;
  max_depth: number;
  /** Sub-agent calls one turn may make. */
  max_calls: number;
}

/** The plan's `sub_agents`: the tools and the limits. */
export interface SubAgentOffer {
  tools: SubAgentTool[];
  limits: SubAgentLimits;
}

/** `agent__<name>`, at most 64 characters, `_2`, `_3` … when two agents' names sanitize alike. */
function toolName(agentName: string, taken: Set<string>): string {
  const base = (SUB_AGENT_TOOL_PREFIX + sanitizeToolName(agentName)).slice(0, 64);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - `_${n}`.length)}_${n}`;
  taken.add(name);
  return name;
}

/**
 * The agent's sub-agents for this turn; undefined when it lists none. An
 * entry whose agent is gone (or in another project) is left out with a
 * warning on the run.
 */
export async function resolveSubAgents(
  deps: { db: Db; config: Config },
  runId: string,
  agent: {
    project_id: string;
    sub_agents?: SubAgentEntry[] | null;
  },
  warnings: string[],
): Promise<SubAgentOffer | undefined> {
  const entries = agent.sub_agents ?? [];
  if (!entries.length) return undefined;
  const repo = new SubAgentsRepository(deps.db);
  const [found, depth] = await Promise.all([
    repo.agents(
      agent.project_id,
      entries.map((e) => e.agent_id),
    ),
    repo.depth(runId),
  ]);
  const byId = new Map(found.map((a) => [a.id, a]));
  const taken = new Set<string>();
  const tools: SubAgentTool[] = [];
  for (const entry of entries) {
    const a = byId.get(entry.agent_id);
    if (!a) {
      warnings.push(`sub-agent ${entry.agent_id} no longer exists: it is not offered`);
      continue;
    }
    tools.push({
      name: toolName(a.name, taken),
      agent_id: a.id,
      agent_name: a.name,
      description: entry.description || a.description || `Hands a task to the agent "${a.name}".`,
      requires_approval: entry.requires_approval ?? false,
    });
  }
  const { subAgentMaxDepth, subAgentMaxFanout } = deps.config.session;
  return { tools, limits: { depth, max_depth: subAgentMaxDepth, max_calls: subAgentMaxFanout } };
}

/** The tool names sub-agents take this turn (MCP tools with the same name are renamed). */
export function subAgentToolNames(offer: SubAgentOffer | undefined): string[] {
  return offer?.tools.map((t) => t.name) ?? [];
}

/**
 * A call of a sub-agent's tool, as the workflow runs it; a call the limits
 * or its arguments refuse is answered with `error` without running.
 */
export function subAgentCallPlan(
  call: ToolCall,
  offered: { agent_id?: string; requires_approval: boolean },
  args: Record<string, unknown>,
  limits: SubAgentLimits | undefined,
): ToolCallPlan {
  const refuse = (error: string): ToolCallPlan => ({
    id: call.id,
    name: call.name,
    kind: 'invalid',
    approval: false,
    error,
  });
  if (typeof args.message !== 'string' || args.message.trim() === '')
    return refuse(`"${call.name}" needs a non-empty string parameter "message"`);
  if (!limits) return refuse(`tool "${call.name}" is not available to this agent`);
  if (limits.depth + 1 > limits.max_depth)
    return refuse(
      `not run: sub-agent calls nest at most ${limits.max_depth} deep (SUB_AGENT_MAX_DEPTH) and this turn is ${limits.depth} deep; answer without it`,
    );
  return {
    id: call.id,
    name: call.name,
    kind: 'sub_agent',
    approval: offered.requires_approval,
    agentId: offered.agent_id!,
    maxCalls: limits.max_calls,
  };
}
