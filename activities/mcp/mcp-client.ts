import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { mcpSpan } from '../../api/telemetry/tool-spans.js';
import { McpConnectionError } from './errors.js';

export type McpTransportKind = 'streamable_http' | 'sse';

export interface McpServerConnection {
  endpoint: string;
  transport: McpTransportKind;
  /** Decrypted header values; never logged. */
  headers: Record<string, string>;
}

export interface McpToolInfo {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

const CLIENT_INFO = { name: 'agent-server', version: '0.1.0' };

function makeTransport(conn: McpServerConnection): Transport {
  const url = new URL(conn.endpoint);
  if (conn.transport === 'sse') {
    return new SSEClientTransport(url, {
      requestInit: { headers: conn.headers },
      // The SSE GET goes through eventsource's fetch; give it our headers too.
      eventSourceInit: {
        fetch: (input, init) =>
          fetch(input, {
            ...init,
            headers: { ...(init?.headers as Record<string, string>), ...conn.headers },
          }),
      },
    });
  }
  return new StreamableHTTPClientTransport(url, { requestInit: { headers: conn.headers } });
}

function describeFailure(err: unknown): string {
  const e = err as { code?: number | string; message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  const status = typeof e.code === 'number' && e.code >= 100 && e.code < 600 ? `HTTP ${e.code}:` : '';
  return [status, e.message ?? String(err), cause ? `(${cause})` : '']
    .filter(Boolean)
    .join(' ')
    .slice(0, 500);
}

/** Connects, runs `fn`, and always closes the session. Connection failures become McpConnectionError. */
export async function withMcpClient<T>(
  conn: McpServerConnection,
  fn: (client: Client) => Promise<T>,
  opts: { timeoutMs?: number } = {},
): Promise<T> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const timeout = opts.timeoutMs ?? 10_000;
  try {
    await client.connect(makeTransport(conn), { timeout });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new McpConnectionError(
      `could not connect to the MCP server at ${conn.endpoint}: ${describeFailure(err)}`,
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Every tool the server lists (following pagination), in a small serialisable shape. */
export async function listMcpTools(
  conn: McpServerConnection,
  opts: { timeoutMs?: number } = {},
): Promise<McpToolInfo[]> {
  return mcpSpan(conn.endpoint, undefined, () => listTools(conn, opts));
}

async function listTools(conn: McpServerConnection, opts: { timeoutMs?: number }): Promise<McpToolInfo[]> {
  return withMcpClient(
    conn,
    async (client) => {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client
          .listTools(cursor ? { cursor } : {}, { timeout: opts.timeoutMs ?? 10_000 })
          .catch((err: unknown) => {
            throw new McpConnectionError(
              `the MCP server at ${conn.endpoint} failed to list tools: ${describeFailure(err)}`,
            );
          });
        for (const t of page.tools) {
          tools.push({
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            input_schema: t.inputSchema,
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    opts,
  );
}
