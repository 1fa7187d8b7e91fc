/**
 * The tools an agent's remote A2A agents (agent `a2a_agents`) contribute to a
 * turn: one per skill on the agent's card, `<remote name>__<skill id>`, or
 * `<remote name>__delegate` for a card without skills (core/a2a/skills.ts),
 * after the entry's tool_filters. Listed with the MCP servers' tools, once
 * per turn; a call runs in the session's tool activity like a memory tool's
 * (activities/session/a2a-call.ts), so the workflow knows nothing of A2A.
 */
import type { A2aAgentEntry } from '../../core/db/tables/index.js';
import { connectA2a } from '../../core/a2a/client.js';
import { a2aToolName, cardSkills } from '../../core/a2a/skills.js';
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';

/** What the model sends: the message for the remote agent, and the task it answers when the remote asked. */
export const A2A_INPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What to ask the remote agent, in words.' },
    task_id: {
      type: 'string',
      description: 'Only to answer a remote agent that asked for more input: the task_id it gave.',
    },
  },
  required: ['message'],
  additionalProperties: false,
};

/** An A2A tool as runs.tools records it: `server_*` name the remote agent, `tool` the skill. */
export interface OfferedA2aTool {
  name: string;
  kind: 'a2a';
  description: string;
  input_schema: Record<string, unknown>;
  requires_approval: boolean;
  server_id: string;
  server_name: string;
  tool: string;
}

/** A plan's remote agents mean the tools must be listed in their own step. */
export const hasA2aAgents = (plan: { a2a_agents?: A2aAgentEntry[] }): boolean =>
  (plan.a2a_agents?.length ?? 0) > 0;

/**
 * The remote agents' tools and the warnings about those that could not be
 * read (the turn goes on without them). Names already taken (MCP tools,
 * the sandbox's, memory and sub-agent tools) get `_2`, `_3`, ….
 */
export async function listAgentA2aTools(
  deps: { db: Db; secrets: SecretBox },
  projectId: string,
  entries: A2aAgentEntry[],
  opts: { timeoutMs: number; taken: Iterable<string> },
): Promise<{ tools: OfferedA2aTool[]; warnings: string[] }> {
  const rows = await new A2aAgentsRepository(deps.db).findMany(
    projectId,
    entries.map((e) => e.a2a_agent_id),
  );
  const listed = await Promise.all(
    entries.map(async (entry) => {
      const row = rows.find((r) => r.id === entry.a2a_agent_id);
      if (!row) return { entry, error: `A2A agent ${entry.a2a_agent_id} no longer exists` };
      const headers = row.headers_enc
        ? deps.secrets.decryptJson<Record<string, string>>(row.headers_enc)
        : {};
      try {
        const { card } = await connectA2a({ cardUrl: row.card_url, headers }, { timeoutMs: opts.timeoutMs });
        return { entry, row, skills: cardSkills(card), card };
      } catch (err) {
        return { entry, row, error: (err as Error).message };
      }
    }),
  );
  const taken = new Set(opts.taken);
  const tools: OfferedA2aTool[] = [];
  const warnings: string[] = [];
  for (const l of listed) {
    if (l.error || !l.skills || !l.row) {
      warnings.push(
        `A2A agent "${l.row?.name ?? l.entry.a2a_agent_id}" could not be read (${l.error}): its tools were not offered`,
      );
      continue;
    }
    const { entry, row, card } = l;
    const filters = entry.tool_filters ?? [];
    const unmatched = filters.filter((f) => !l.skills.some((s) => s.id === f));
    if (unmatched.length)
      warnings.push(
        `tool_filters of A2A agent "${row.name}" name skills it does not list: ${unmatched.join(', ')}`,
      );
    for (const skill of l.skills) {
      if (filters.length && !filters.includes(skill.id)) continue;
      const base = a2aToolName(row.name, skill.id);
      let name = base;
      for (let n = 2; taken.has(name); n += 1) name = `${base.slice(0, 60)}_${n}`;
      taken.add(name);
      tools.push({
        name,
        kind: 'a2a',
        description: describe(card.name, card.description, skill),
        input_schema: A2A_INPUT_SCHEMA,
        requires_approval: (entry.tools_requiring_approval ?? []).includes(skill.id),
        server_id: row.id,
        server_name: row.name,
        tool: skill.id,
      });
    }
  }
  return { tools, warnings };
}

function describe(
  agent: string,
  agentDescription: string,
  skill: { name: string; description: string; examples: string[] },
): string {
  const examples = skill.examples.length ? ` Examples: ${skill.examples.slice(0, 3).join(' | ')}` : '';
  return (
    `Asks the remote agent "${agent}" (${agentDescription}) to ${skill.name}: ${skill.description}.${examples} ` +
    'Its answer comes back as text.'
  ).slice(0, 1_024);
}

/** The run's tools with the remote agents' added (after every other tool, whose names they avoid). */
export async function withA2aTools<R extends { offered: Array<{ name: string }> }>(
  deps: { db: Db; secrets: SecretBox },
  plan: { project_id: string; a2a_agents?: A2aAgentEntry[] },
  record: R,
  timeoutMs: number,
): Promise<{ record: R; warnings: string[] }> {
  if (!hasA2aAgents(plan)) return { record, warnings: [] };
  const { tools, warnings } = await listAgentA2aTools(deps, plan.project_id, plan.a2a_agents!, {
    timeoutMs,
    taken: record.offered.map((t) => t.name),
  });
  return { record: { ...record, offered: [...record.offered, ...tools] }, warnings };
}
