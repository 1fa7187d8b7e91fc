/**
 * The official MCP clients as a user of the MCP door would run them: the v1
 * SDK (`@modelcontextprotocol/sdk`, the 2025-11-25 session handshake) and
 * the v2 client (`@modelcontextprotocol/client`, which discovers the
 * 2026-07-28 revision and speaks it statelessly).
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export type Elicit = (params: { message: string; requestedSchema?: unknown }) => {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
};

export interface Progress {
  progress: number;
  message?: string;
}

/** What a test does with either client. */
export interface McpTestClient {
  revision: string | undefined;
  listTools(): Promise<Array<Record<string, unknown>>>;
  call(
    name: string,
    args: Record<string, unknown>,
    onProgress?: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<CallResult>;
  sessionId: string | undefined;
  close(): Promise<void>;
}

export interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

const INFO = { name: 'mcp-door-test', version: '1.0.0' };
const ELICITATION = { elicitation: { form: {} } };

export async function connectV1(
  url: string,
  opts: { elicit?: Elicit; headers?: Record<string, string> } = {},
): Promise<McpTestClient> {
  const client = new ClientV1(INFO, { capabilities: opts.elicit ? ELICITATION : {} });
  if (opts.elicit) {
    const elicit = opts.elicit;
    client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params as { message: string }));
  }
  const transport = new TransportV1(new URL(url), { requestInit: { headers: opts.headers ?? {} } });
  await client.connect(transport);
  return {
    revision: transport.protocolVersion,
    get sessionId() {
      return transport.sessionId;
    },
    listTools: async () => (await client.listTools()).tools,
    call: async (name, args, onProgress, signal) =>
      (await client.callTool({ name, arguments: args }, undefined, {
        timeout: 60_000,
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: true } : {}),
      })) as CallResult,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

export async function connectV2(
  url: string,
  opts: { elicit?: Elicit; headers?: Record<string, string> } = {},
): Promise<McpTestClient> {
  const client = new ClientV2(INFO, {
    capabilities: opts.elicit ? ELICITATION : {},
    versionNegotiation: { mode: 'auto' },
  });
  if (opts.elicit) {
    const elicit = opts.elicit;
    client.setRequestHandler('elicitation/create', (req) =>
      Promise.resolve(elicit(req.params as { message: string })),
    );
  }
  const transport = new TransportV2(new URL(url), { requestInit: { headers: opts.headers ?? {} } });
  await client.connect(transport);
  return {
    revision: client.getNegotiatedProtocolVersion(),
    sessionId: undefined,
    listTools: async () => (await client.listTools()).tools,
    call: async (name, args, onProgress, signal) =>
      (await client.callTool(
        { name, arguments: args },
        {
          timeout: 60_000,
          ...(signal ? { signal } : {}),
          ...(onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: true } : {}),
        },
      )) as CallResult,
    close: () => client.close(),
  };
}
