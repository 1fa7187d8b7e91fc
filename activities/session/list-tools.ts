/** The `listTools` activity: the agent's MCP servers' tools, listed once per turn. */
import type { McpToolListing } from '../tools/mcp-tools.js';
import { listAgentMcpTools } from '../tools/mcp-tools.js';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tools.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import { runToolsRecord, SANDBOX_TOOL_NAME, sandboxState, type RunTools } from './tools.js';
import { loadTurnRun } from './turn-run.js';
import type { SessionDeps } from './types.js';

/** What the run's warnings say about the listing: servers that failed, filters that match nothing. */
function listingWarnings(listing: McpToolListing): string[] {
  const warnings: string[] = [];
  for (const server of listing.servers) {
    if (server.error)
      warnings.push(
        `MCP server "${server.name}" could not be listed (${server.error}): its tools were not offered`,
      );
    if (server.unmatched_filters?.length)
      warnings.push(
        `tool_filters of MCP server "${server.name}" name tools it does not list: ${server.unmatched_filters.join(', ')}`,
      );
  }
  return warnings;
}

export function createListToolsActivities(deps: SessionDeps) {
  const { db, config } = deps;

  return {
    /**
     * Lists the agent's MCP servers' tools (filters, unique names) and
     * records on the run what the model will see and why. Once per turn: a
     * run that has its list keeps it.
     */
    async listTools(runId: string): Promise<{ offered: number; failedServers: number }> {
      const { run, plan } = await loadTurnRun(db, runId);
      const tools = run.tools as RunTools | null;
      if (tools) return { offered: tools.offered.length, failedServers: 0 };
      const listing = await listAgentMcpTools(
        { db, secrets: deps.secrets },
        plan.project_id,
        plan.mcp_servers,
        {
          timeoutMs: config.session.mcpListTimeoutMs,
          reservedNames: [
            ...(plan.sandbox_enabled ? [SANDBOX_TOOL_NAME] : []),
            ...(plan.memory_tools ? MEMORY_TOOL_NAMES : []),
          ],
        },
      );
      const record = runToolsRecord(sandboxState(plan), listing, plan.memory_tools);
      await new TurnsRepository(db).recordTools(runId, record, listingWarnings(listing));
      return {
        offered: record.offered.length,
        failedServers: listing.servers.filter((s) => s.error).length,
      };
    },
  };
}
