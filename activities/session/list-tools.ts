/** The `listTools` activity: the agent's MCP servers' tools, listed once per turn. */
import type { McpToolListing } from '../tools/mcp-tools.js';
import { listAgentMcpTools } from '../tools/mcp-tools.js';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tools.js';
import { withA2aTools } from '../tools/a2a-tools.js';
import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import { TurnsRepository } from '../../core/repositories/turns.repository.js';
import { subAgentToolNames } from './sub-agents.js';
import { runToolsRecord, SANDBOX_TOOL_NAME, sandboxState, type RunTools } from './tools.js';
import { loadTurnRun } from './turn-run.js';
import type { SessionDeps } from './types.js';
import type { ListToolsResult } from '../../workflows/session.definitions.js';

/** How long a run waits for a person (an MCP server's authorization, an answer) when the agent does not say: a day. */
export const DEFAULT_PERSON_WAIT_MS = 24 * 3600 * 1000;

/** What the run's warnings say about the listing: servers that failed, filters that match nothing. */
function listingWarnings(listing: McpToolListing): string[] {
  const warnings: string[] = [];
  for (const server of listing.servers) {
    // Still unauthorized once the turn stopped waiting for it: not a failure to list.
    if (server.authorization_url)
      warnings.push(`MCP server "${server.name}" was not authorized in time: its tools were not offered`);
    else if (server.error)
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
    async listTools(runId: string, skipUnauthorized = false): Promise<ListToolsResult> {
      const { run, plan } = await loadTurnRun(db, runId);
      const tools = run.tools as RunTools | null;
      if (tools) return { offered: tools.offered.length, failedServers: 0 };
      const listing = await listAgentMcpTools(
        { db, secrets: deps.secrets, publicUrl: publicBaseUrl(config) },
        plan.project_id,
        plan.mcp_servers,
        {
          timeoutMs: config.session.mcpListTimeoutMs,
          reservedNames: [
            ...(plan.sandbox_enabled ? [SANDBOX_TOOL_NAME] : []),
            ...(plan.memory_tools ? MEMORY_TOOL_NAMES : []),
            ...subAgentToolNames(plan.sub_agents),
          ],
          endUserId: run.end_user_id ?? null,
        },
      );
      // A server that wants authorization: the run waits for it rather than going on without its tools.
      const unauthorized = listing.servers.find((s) => s.authorization_url);
      if (unauthorized && !skipUnauthorized)
        return {
          kind: 'awaiting_authorization',
          details: {
            server_id: unauthorized.id,
            server_name: unauthorized.name,
            end_user_id: run.end_user_id ?? null,
            authorization_url: unauthorized.authorization_url,
          },
          timeoutMs: plan.authorization_timeout_ms ?? DEFAULT_PERSON_WAIT_MS,
        };
      const mcpRecord = runToolsRecord(sandboxState(plan), listing, plan.memory_tools, plan.sub_agents);
      const { record, warnings } = await withA2aTools(deps, plan, mcpRecord, config.session.mcpListTimeoutMs);
      await new TurnsRepository(db).recordTools(runId, record, [...listingWarnings(listing), ...warnings]);
      return {
        offered: record.offered.length,
        failedServers: listing.servers.filter((s) => s.error).length,
      };
    },
  };
}
