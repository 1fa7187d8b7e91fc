/**
 * Our client of remote A2A agents (the official @a2a-js/sdk): the agent card
 * from its URL, a client over the card's JSON-RPC or REST interface, every
 * request (the card's included) through the egress policy with the agent's
 * configured headers. Used by the `/a2a-agents` inspect route and by the
 * session's A2A tools (activities/tools/a2a-tools.ts).
 */
import type { AgentCard, Part } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { egressFetch } from '../security/egress-agent.js';
import { findEgressDenial } from '../security/egress-policy.js';

/** Where a remote agent is and what to send it. */
export interface A2aConnection {
  cardUrl: string;
  headers: Record<string, string>;
  /**
   * Headers for the agent's interface, learnt from its card (an OAuth bearer
   * token); what it throws (a person must authorize first) goes to the caller.
   */
  authorize?: (card: AgentCard) => Promise<Record<string, string>>;
  /** Called (and awaited) when the interface answers 401: the credentials given were refused. */
  refused?: () => Promise<void>;
}

/** Thrown when the card cannot be fetched or read, or the remote cannot be reached: says why, without headers. */
export class A2aConnectionError extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    /** The server's egress policy refused the address: retrying cannot help. */
    readonly egressDenied = false,
  ) {
    super(message, options);
    this.name = 'A2aConnectionError';
  }
}

/** fetch through the egress policy, with the agent's headers under the SDK's own (its A2A-Version wins). */
function fetchWith(
  headers: Record<string, string>,
  signal?: AbortSignal,
  refused?: () => Promise<void>,
): typeof fetch {
  return (async (input: string | URL, init?: RequestInit) => {
    const merged = new Headers(headers);
    new Headers(init?.headers).forEach((v, k) => merged.set(k, v));
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => Boolean(s));
    const res = await egressFetch(input, {
      ...init,
      headers: merged,
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
    });
    if (res.status === 401 && refused) await refused();
    return res;
  }) as typeof fetch;
}

function factory(
  conn: A2aConnection,
  signal?: AbortSignal,
  extra: Record<string, string> = {},
): ClientFactory {
  const fetchImpl = fetchWith({ ...conn.headers, ...extra }, signal, conn.refused);
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

/** Why a connection failed, in words the API and the model may see. */
export function connectionFailure(err: unknown, what: string): A2aConnectionError {
  const denied = findEgressDenial(err);
  if (denied) return new A2aConnectionError(`${what}: ${denied.message}`, { cause: err }, true);
  const message = err instanceof Error ? err.message : String(err);
  return new A2aConnectionError(`${what}: ${message}`, { cause: err });
}

/** Fetches the agent card with the agent's headers; A2aConnectionError when it cannot be read. */
export async function fetchA2aCard(
  conn: A2aConnection,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<AgentCard> {
  try {
    // The card is public: neither learnt credentials nor their refusal apply to it.
    const resolver = factory({ cardUrl: conn.cardUrl, headers: conn.headers }, opts.signal).options
      .cardResolver!;
    return await withTimeout(resolver.resolve(conn.cardUrl, ''), opts.timeoutMs, 'the agent card');
  } catch (err) {
    throw connectionFailure(err, `could not read the agent card at ${safeUrl(conn.cardUrl)}`);
  }
}

/**
 * Fetches the card and builds a client over it, with the headers
 * `conn.authorize` learns from the card; A2aConnectionError when either fails.
 */
export async function connectA2a(
  conn: A2aConnection,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<{ client: Client; card: AgentCard }> {
  const card = await fetchA2aCard(conn, opts);
  const extra = conn.authorize ? await conn.authorize(card) : {};
  const f = factory(conn, opts.signal, extra);
  try {
    return { client: await f.createFromAgentCard(card), card };
  } catch (err) {
    throw connectionFailure(err, 'the agent card offers no interface this client speaks (JSON-RPC, REST)');
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not arrive within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL without credentials or query (they may hold a key). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * The readable content of parts: texts joined as they are (a streamed
 * artifact arrives as chunks of one text), data as JSON and files by name
 * or URL, each on a line of its own.
 */
export function partsText(parts: Part[] | undefined): string {
  let out = '';
  for (const p of parts ?? []) {
    const c = p.content;
    if (!c) continue;
    if (c.$case === 'text') out += c.value;
    else if (c.$case === 'data') out += `\n${JSON.stringify(c.value)}\n`;
    else if (c.$case === 'url') out += `\n[file ${p.filename || c.value}](${c.value})\n`;
    else out += `\n[file ${p.filename || 'without a name'}, ${p.mediaType || 'binary'}]\n`;
  }
  return out.trim();
}
