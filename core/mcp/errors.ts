/** Thrown when an MCP server cannot be reached, refuses us, or does not speak MCP; the message says which. */
export class McpConnectionError extends Error {
  override name = 'McpConnectionError';
}

/**
 * An MCP server wants OAuth authorization we do not hold (no token, a token
 * refused, or a scope it needs we were not granted): a person must open
 * `authorizationUrl`. A turn that meets it pauses (`awaiting_authorization`)
 * rather than failing; completing the flow wakes it.
 */
export class McpAuthorizationRequired extends Error {
  override name = 'McpAuthorizationRequired';
  constructor(
    readonly serverId: string,
    readonly endUserId: string | null,
    readonly authorizationUrl: string,
    message = 'the MCP server needs authorization',
  ) {
    super(message);
  }
}
