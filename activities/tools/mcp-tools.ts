/**
 * The agent's MCP tools: which tools a turn offers the model (listing every
 * configured server, filtering, making names unique: mcp-tool-listing.ts) and
 * calling one of them (mcp-tool-call.ts). The session activities wrap these;
 * nothing here touches Temporal, so a listing or a call can be retried by the
 * caller as it sees fit.
 */
export type { McpToolDeps } from './mcp-server-access.js';
export {
  DEFAULT_LIST_TIMEOUT_MS,
  listAgentMcpTools,
  type AgentMcpEntry,
  type McpServerListing,
  type McpToolListing,
  type OfferedMcpTool,
} from './mcp-tool-listing.js';
export {
  callMcpTool,
  DEFAULT_CALL_TIMEOUT_MS,
  type McpCallOptions,
  type McpCallResult,
  type McpProgress,
} from './mcp-tool-call.js';
