import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type ElicitRequest,
  type ElicitResult,
  type Transport,
} from '@modelcontextprotocol/client';
import { egressFetch, egressRefusal } from '../security/egress-agent.js';
import { findEgressDenial } from '../security/egress-policy.js';
import { headerSecrets, redactSecretValues, redactText, redactUrl, urlSecrets } from '../security/redact.js';
import { mcpSpan } from '../telemetry/tool-spans.js';
import { McpAuthorizationRequired, McpConnectionError } from './errors.js';
import { MAX_AUTHORIZATION_ATTEMPTS, type McpOAuthProvider } from './oauth/provider.js';
import {
  negotiationFor,
  priorOf,
  verdictOf,
  worthRemembering,
  type McpTransportKind,
  type ProtocolMemory,
} from './protocol-revision.js';
import { TaskAwareClient } from './tasks.js';

export type { McpTransportKind } from './protocol-revision.js';

export interface McpServerConnection {
  endpoint: string;
  transport: McpTransportKind;
  /** Decrypted header values; never logged. */
  headers: Record<string, string>;
  /**
   * OAuth for this server and end user: the transport sends its token and,
   * on a 401 or a 403 insufficient_scope, runs the SDK's authorization. When
   * that needs a person, withMcpClient throws McpAuthorizationRequired.
   */
  auth?: McpOAuthProvider;
  /** The server's protocol revision as remembered, and where to remember what this connection learns. */
  protocol?: ProtocolMemory;
}

export interface McpToolInfo {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

const CLIENT_INFO = { name: 'agent-server', version: '0.1.0' };

/**
 * Answers a server's question (`elicitation/create`) during a call: form
 * mode (a schema to fill; the SDK applies the schema's defaults to an
 * accepted answer) or URL mode (a page the person opens).
 */
export type ElicitHandler = (params: ElicitRequest['params']) => Promise<ElicitResult>;

/** A 2026-07-28 server's `input_required` result: its questions by key, and its opaque state. */
export interface InputRoundAsked {
  inputRequests: Record<string, { method: string; params?: unknown }>;
  requestState?: string;
}

/**
 * The rounds of questions a 2026-07-28 server asks during one call, kept
 * durably by the caller: `resume` gives the answers to a round asked earlier
 * (the call then retries with them and that round's `requestState`, rather
 * than starting over), `answer` answers a round now (asking a person when
 * need be; it throws when the call stops waiting for them).
 */
export interface InputRounds {
  resume(): Promise<{ inputResponses: Record<string, unknown>; requestState?: string } | undefined>;
  answer(asked: InputRoundAsked): Promise<Record<string, unknown>>;
}

/** The capabilities a client that can ask a person declares. */
const ELICITATION = { elicitation: { form: { applyDefaults: true }, url: {} } };

function makeTransport(conn: McpServerConnection): Transport {
  const url = new URL(conn.endpoint);
  // Discovery, registration and token requests go through the same egress policy as MCP traffic.
  const fetchFn = conn.auth ? conn.auth.wrapFetch(egressFetch) : egressFetch;
  const auth = conn.auth ? { authProvider: conn.auth } : {};
  if (conn.transport === 'sse') {
    return new SSEClientTransport(url, {
      ...auth,
      requestInit: { headers: conn.headers },
      fetch: fetchFn,
      // The SSE GET goes through eventsource's fetch; give it our headers too.
      eventSourceInit: {
        fetch: (input, init) =>
          egressFetch(input, {
            ...init,
            headers: { ...(init?.headers as Record<string, string>), ...conn.headers },
          }),
      },
    });
  }
  return new StreamableHTTPClientTransport(url, {
    ...auth,
    requestInit: { headers: conn.headers },
    fetch: fetchFn,
  });
}

/**
 * What we send an MCP server that must never come back out of what it says
 * (a server or a proxy may echo it in an error): credential header values
 * and the endpoint's own credentials.
 */
export function connectionSecrets(
  conn: Pick<McpServerConnection, 'endpoint' | 'headers'> & { auth?: McpOAuthProvider | undefined },
): string[] {
  return [...headerSecrets(conn.headers), ...urlSecrets(conn.endpoint), ...(conn.auth?.secrets() ?? [])];
}

/**
 * What the provider learnt while the SDK failed: the server wants a person
 * to authorize (McpAuthorizationRequired), or it kept refusing the scopes
 * it was granted (McpConnectionError); undefined when neither.
 */
function authorizationOutcome(conn: McpServerConnection): Error | undefined {
  const auth = conn.auth;
  if (!auth) return undefined;
  if (auth.refusedScope !== undefined)
    return new McpConnectionError(
      `the MCP server at ${redactUrl(conn.endpoint)} keeps refusing the scopes granted` +
        `${auth.refusedScope ? ` (${auth.refusedScope})` : ''}: authorized ${MAX_AUTHORIZATION_ATTEMPTS} times ` +
        "without being let in, so no further authorization is asked for; check the server's scope configuration",
    );
  if (auth.authorizationUrl)
    return new McpAuthorizationRequired(auth.serverId, auth.endUserId || null, auth.authorizationUrl.href);
  return undefined;
}

/** An SDK error's text with `secrets` and credential-shaped text removed (the error itself when nothing changed). */
function scrubError(err: unknown, secrets: readonly string[]): unknown {
  if (!(err instanceof Error)) return err;
  const message = redactText(redactSecretValues(err.message, secrets));
  if (message === err.message) return err;
  if (err instanceof McpConnectionError) return new McpConnectionError(message);
  // Keep the class (callers tell McpError, ZodError… apart); the stack repeats the message.
  err.message = message;
  if (err.stack) err.stack = redactText(redactSecretValues(err.stack, secrets));
  return err;
}

/**
 * A short, single-line account of an SDK/transport failure (HTTP status,
 * message, network cause). The server's answer is often in it: `secrets`
 * (see connectionSecrets) are removed before it is cut to length, so no
 * part of one survives the cut.
 */
export function describeFailure(err: unknown, secrets: readonly string[] = []): string {
  const e = err as {
    code?: number | string;
    data?: { status?: unknown };
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const cause = e.cause?.code ?? e.cause?.message;
  // The client's HTTP errors carry the status in `data` (older ones in `code`).
  const code = typeof e.data?.status === 'number' ? e.data.status : e.code;
  const status = typeof code === 'number' && code >= 100 && code < 600 ? `HTTP ${code}:` : '';
  const text = [status, e.message ?? String(err), cause ? `(${cause})` : ''].filter(Boolean).join(' ');
  return redactText(redactSecretValues(text, secrets)).slice(0, 500);
}

/**
 * Connects, runs `fn`, and always closes the session (ending a Streamable HTTP
 * session with a best-effort DELETE). Connection failures become
 * McpConnectionError, a destination the egress policy refuses throws
 * EgressDeniedError; an abort of `signal` rethrows the signal's reason.
 * With `conn.auth`: a server that wants authorization a person must give
 * (on connecting or on any request, a step-up included) throws
 * McpAuthorizationRequired with the URL to open; one that keeps refusing
 * the scopes granted (MAX_AUTHORIZATION_ATTEMPTS) throws McpConnectionError.
 */
export async function withMcpClient<T>(
  conn: McpServerConnection,
  fn: (client: Client) => Promise<T>,
  opts: {
    timeoutMs?: number;
    signal?: AbortSignal;
    elicit?: ElicitHandler;
    /** Declares the tasks extension (2026-07-28): a call may then answer with a task (see tasks.ts). */
    tasks?: boolean;
  } = {},
): Promise<T> {
  const client = new (opts.tasks ? TaskAwareClient : Client)(CLIENT_INFO, {
    capabilities: opts.elicit ? ELICITATION : {},
    versionNegotiation: negotiationFor(conn.transport),
  });
  if (opts.elicit) {
    const elicit = opts.elicit;
    // A 2025-era server asks with a request; a 2026-07-28 one answers `input_required`, which the
    // client fulfils through this same handler and retries with the answers and the server's requestState.
    client.setRequestHandler('elicitation/create', (request) => elicit(request.params));
  }
  const timeout = opts.timeoutMs ?? 10_000;
  const transport = makeTransport(conn);
  const prior = priorOf(conn.transport, conn.protocol?.known ?? null);
  opts.signal?.throwIfAborted();
  try {
    await client.connect(transport, {
      timeout,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(prior ? { prior } : {}),
    });
    await rememberProtocol(conn, client);
  } catch (err) {
    await client.close().catch(() => undefined);
    // What was remembered may be what failed: the next connection probes afresh.
    if (prior) await conn.protocol?.learnt(null).catch(() => undefined);
    opts.signal?.throwIfAborted();
    const needsAuth = authorizationOutcome(conn);
    if (needsAuth) throw needsAuth;
    // Refused by EGRESS_ALLOW / EGRESS_DENY: trying again cannot help, so not an McpConnectionError.
    // (The SSE transport flattens the connector's error into a message: ask the policy itself.)
    const denied = findEgressDenial(err) ?? (await egressRefusal(conn.endpoint));
    if (denied) throw denied;
    throw new McpConnectionError(
      `could not connect to the MCP server at ${redactUrl(conn.endpoint)}: ${describeFailure(err, connectionSecrets(conn))}`,
    );
  }
  try {
    const result = await fn(client);
    await conn.auth?.accepted().catch(() => undefined);
    return result;
  } catch (err) {
    throw authorizationOutcome(conn) ?? scrubError(err, connectionSecrets(conn));
  } finally {
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      // Servers keep per-session state until told otherwise; do not wait long for it.
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
      ]);
    }
    await client.close().catch(() => undefined);
  }
}

/** Keeps what the connection learnt of the server's revision, when it is news. */
async function rememberProtocol(conn: McpServerConnection, client: Client): Promise<void> {
  const memory = conn.protocol;
  if (!memory) return;
  const learnt = verdictOf(client);
  // Remembering is an optimisation: a failure to write it must not fail the call.
  if (worthRemembering(memory.known, learnt)) await memory.learnt(learnt).catch(() => undefined);
}

/** Every tool the server lists (following pagination), in a small serialisable shape. */
export async function listMcpTools(
  conn: McpServerConnection,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<McpToolInfo[]> {
  return mcpSpan(redactUrl(conn.endpoint), undefined, () =>
    withMcpClient(
      conn,
      (client) => fetchToolList(client, conn.endpoint, { ...opts, secrets: connectionSecrets(conn) }),
      opts,
    ),
  );
}

/** At most this many pages: a server whose cursor never ends must not hold a turn forever. */
const MAX_PAGES = 100;

/**
 * Pages through `tools/list` on a connected client; a failure becomes
 * McpConnectionError naming `label` (an endpoint: shown with its credentials
 * redacted), with `secrets` (see connectionSecrets) removed from it.
 */
export async function fetchToolList(
  client: Client,
  label: string,
  opts: { timeoutMs?: number; signal?: AbortSignal; secrets?: readonly string[] } = {},
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client
      .listTools(cursor ? { cursor } : {}, {
        timeout: opts.timeoutMs ?? 10_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      })
      .catch((err: unknown) => {
        opts.signal?.throwIfAborted();
        throw new McpConnectionError(
          `the MCP server at ${redactUrl(label)} failed to list tools: ${describeFailure(err, opts.secrets)}`,
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
    pages += 1;
  } while (cursor && pages < MAX_PAGES);
  return tools;
}
