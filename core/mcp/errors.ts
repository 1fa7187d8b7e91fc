/** Thrown when an MCP server cannot be reached, refuses us, or does not speak MCP; the message says which. */
export class McpConnectionError extends Error {
  override name = 'McpConnectionError';
}
