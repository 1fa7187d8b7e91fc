/**
 * The rules for an agent's `sub_agents`: each names another agent of the same
 * project, and no chain of sub-agents leads back to the agent being saved.
 * A cycle would let a turn call itself until the depth limit stops it, so it
 * is refused when the agent is saved (400 naming `sub_agents`), not found
 * at run time.
 */
import type { Knex } from 'knex';
import type { FieldError } from '../../core/errors.js';
import type { SubAgentEntry } from '../../core/db/tables/index.js';

/** Saves and deletes that change the project's graph of sub-agents take turns until their transaction ends. */
export async function lockSubAgentGraph(conn: Knex.Transaction, projectId: string): Promise<void> {
  await conn.raw('select pg_advisory_xact_lock(hashtext(?))', [`sub_agents:${projectId}`]);
}

/**
 * The problems with `entries`, for the agent `selfId` (absent for a new
 * agent, which nothing can name yet). Saves that change sub-agents in one
 * project take turns (a transaction-scoped lock), so two saves cannot each
 * close half of a cycle.
 */
export async function subAgentProblems(
  conn: Knex.Transaction,
  projectId: string,
  selfId: string | undefined,
  entries: SubAgentEntry[],
): Promise<FieldError[]> {
  if (entries.length === 0) return [];
  await lockSubAgentGraph(conn, projectId);
  const rows = await conn('agents')
    .where({ project_id: projectId })
    .select<Array<{ id: string; name: string; sub_agents: SubAgentEntry[] }>>('id', 'name', 'sub_agents');
  const byId = new Map(rows.map((r) => [r.id, r]));
  const problems: FieldError[] = [];
  for (const [i, entry] of entries.entries()) {
    const field = `sub_agents.${i}.agent_id`;
    if (entry.agent_id === selfId)
      problems.push({ field, message: 'an agent cannot be its own sub-agent', type: 'any.invalid' });
    else if (!byId.has(entry.agent_id))
      problems.push({
        field,
        message: `${field} does not name an existing agent in this project`,
        type: 'any.reference',
      });
  }
  if (problems.length > 0 || !selfId) return problems;
  const path = cyclePath(selfId, entries, byId);
  if (path)
    problems.push({
      field: 'sub_agents',
      message: `sub_agents would make a cycle: ${path.map((id) => byId.get(id)?.name ?? id).join(' → ')}`,
      type: 'any.invalid',
    });
  return problems;
}

/** The first chain of sub-agents from `selfId` back to itself (its ids, both ends included), or null. */
function cyclePath(
  selfId: string,
  entries: SubAgentEntry[],
  byId: Map<string, { sub_agents: SubAgentEntry[] }>,
): string[] | null {
  const edges = (id: string) =>
    (id === selfId ? entries : (byId.get(id)?.sub_agents ?? [])).map((e) => e.agent_id);
  const seen = new Set<string>();
  const walk = (id: string, path: string[]): string[] | null => {
    for (const next of edges(id)) {
      if (next === selfId) return [...path, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return null;
  };
  return walk(selfId, [selfId]);
}
