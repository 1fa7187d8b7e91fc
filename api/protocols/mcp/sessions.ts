import { randomUUID } from 'node:crypto';
import {
  isInitializeRequest,
  legacyStatelessFallback,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type LegacyHttpHandler,
  type McpServerFactory,
  type Server,
} from '@modelcontextprotocol/server';
import { jsonRpcError } from './errors.js';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  projectId: string;
  lastSeen: number;
}

/** How often idle sessions are looked for. */
const SWEEP_MS = 60_000;

const notFound = () =>
  new Response(JSON.stringify(jsonRpcError(-32001, 'Session not found')), {
    status: 404,
    headers: { 'content-type': 'application/json' },
  });

/**
 * The 2025-11-25 era: `initialize` opens a session (`Mcp-Session-Id`) on this
 * replica, which keeps the client's capabilities and the live streams a
 * question to the caller (elicitation) travels on. A request for a session
 * this replica does not hold (another replica's, or one ended or expired) is
 * the spec's 404, upon which clients open a new one; the turns themselves
 * are durable either way. Requests without a session are served statelessly.
 */
export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly stateless: LegacyHttpHandler;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly factory: (authInfo: AuthInfo, request: Request) => Promise<Server>,
    private readonly idleMs: number,
    private readonly onerror: (err: Error) => void,
  ) {
    const fallback: McpServerFactory = (ctx) => factory(ctx.authInfo!, ctx.requestInfo!);
    this.stateless = legacyStatelessFallback(fallback, onerror);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(
    request: Request,
    parsedBody: unknown,
    authInfo: AuthInfo,
    projectId: string,
  ): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const session = this.sessions.get(id);
      if (!session || session.projectId !== projectId) return notFound();
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, { parsedBody, authInfo });
    }
    if (request.method === 'POST' && isInitializeRequest(parsedBody))
      return this.open(request, parsedBody, authInfo, projectId);
    return this.stateless(request, { parsedBody, authInfo });
  }

  private async open(
    request: Request,
    parsedBody: unknown,
    authInfo: AuthInfo,
    projectId: string,
  ): Promise<Response> {
    const server = await this.factory(authInfo, request);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, projectId, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onerror = this.onerror;
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody, authInfo });
  }

  private async sweep(): Promise<void> {
    const before = Date.now() - this.idleMs;
    for (const [id, s] of this.sessions)
      if (s.lastSeen < before) {
        this.sessions.delete(id);
        await s.server.close().catch(this.onerror);
      }
  }

  /** Ends every session (the app is stopping). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(this.onerror)));
  }
}
