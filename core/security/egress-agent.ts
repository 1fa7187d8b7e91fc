import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import {
  compileEgressPolicy,
  deniedMessage,
  EgressDeniedError,
  egressSettings,
  normalizeAddress,
  refusalByAddress,
  refusalByName,
  resolvableDenies,
  type EgressPolicy,
  type EgressSettings,
} from './egress-policy.js';

/**
 * The egress policy applied where it cannot be dodged: in the undici
 * connector, after DNS resolution, on the address actually connected to (a
 * name that resolves to a denied address is refused; re-resolving between a
 * check and the connect is impossible). Every redirect hop and retry opens its
 * connection here too.
 */

// Until an entry point installs the configured policy (unit tests, benches): the built-in entries
// that need no configuration (link-local, metadata and unspecified addresses).
let current: EgressPolicy = compileEgressPolicy(egressSettings({}));

/**
 * Installs the policy of this process's configuration; the api and the worker
 * call it at start. Configuration, not state: every replica computes the same.
 */
export function setEgressPolicy(settings: EgressSettings): void {
  current = compileEgressPolicy(settings);
}

function lookupAll(name: string): Promise<string[]> {
  return new Promise((resolve) =>
    dnsLookup(name, { all: true }, (err, addrs) =>
      resolve(err ? [] : addrs.map((a) => normalizeAddress(a.address))),
    ),
  );
}

/** The refusal for connecting to `addresses` (all of them: any denied one refuses the destination). */
async function refusal(
  policy: EgressPolicy,
  host: string,
  port: number,
  addresses: string[],
): Promise<string | undefined> {
  for (const address of addresses) {
    const refused = refusalByAddress(policy, host, address, port);
    if (refused) return refused;
  }
  for (const { name, entry } of resolvableDenies(policy, port)) {
    const theirs = await lookupAll(name);
    if (addresses.some((a) => theirs.includes(normalizeAddress(a)))) return deniedMessage(entry, host, port);
  }
  return undefined;
}

/** dns.lookup, then the policy on every address before net.connect may use one. */
function checkedLookup(policy: EgressPolicy, port: number): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addrs: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      refusal(
        policy,
        hostname,
        port,
        addrs.map((a) => a.address),
      ).then(
        (refused) => {
          if (refused) return callback(new EgressDeniedError(refused), '', 0);
          if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addrs);
          const first = addrs[0]!;
          callback(null, first.address, first.family);
        },
        (e: Error) => callback(e, '', 0),
      );
    });
  };
}

/**
 * An undici connector enforcing `policy`: names are checked before DNS,
 * IP literals before the socket exists (so a denied address is never even
 * dialled), and resolved names in the lookup that net.connect uses.
 */
export function egressConnector(
  policy: EgressPolicy,
  options: buildConnector.BuildOptions = {},
): buildConnector.connector {
  // One inner connector per port: the lookup needs the port and receives only the name.
  const inner = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number) => {
    let c = inner.get(port);
    if (!c) {
      c = buildConnector({ ...options, lookup: checkedLookup(policy, port) });
      inner.set(port, c);
    }
    return c;
  };
  return function egressConnect(opts, callback) {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    const fail = (message: string) => queueMicrotask(() => callback(new EgressDeniedError(message), null));
    const byName = refusalByName(policy, host, port);
    if (byName) return fail(byName);
    if (isIP(host) === 0) return connectorFor(port)(opts, callback);
    // net.connect does not call a lookup for an IP literal: check it here.
    refusal(policy, host, port, [host]).then(
      (refused) => (refused ? fail(refused) : connectorFor(port)(opts, callback)),
      (err: Error) => callback(err, null),
    );
  };
}

/**
 * Whether the current policy refuses `url`, checked as a connection to it
 * would be. For callers whose client library flattens the connector's error
 * into a message (the MCP SDK's SSE stream), to tell a refusal from an
 * outage, and for a provider's redirect, which nothing follows, to say
 * whether the policy refuses where it points.
 */
export async function egressRefusal(url: string): Promise<EgressDeniedError | undefined> {
  const policy = current;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
  const addresses = isIP(host) !== 0 ? [host] : await lookupAll(host);
  const refused = refusalByName(policy, host, port) ?? (await refusal(policy, host, port, addresses));
  return refused ? new EgressDeniedError(refused) : undefined;
}

const agents = new WeakMap<EgressPolicy, Map<number, Agent>>();

/**
 * A keep-alive Agent per connect timeout under the current policy. A new
 * policy gets new Agents, so a connection pooled under an older policy is
 * never reused under a stricter one.
 */
export function egressAgent(connectTimeoutMs = 10_000): Agent {
  const policy = current;
  let byTimeout = agents.get(policy);
  if (!byTimeout) {
    byTimeout = new Map();
    agents.set(policy, byTimeout);
  }
  let agent = byTimeout.get(connectTimeoutMs);
  if (!agent) {
    agent = new Agent({
      connect: egressConnector(policy, { timeout: connectTimeoutMs }),
      keepAliveTimeout: 30_000,
    });
    byTimeout.set(connectTimeoutMs, agent);
  }
  return agent;
}

/** WHATWG fetch through the policy (for the MCP SDK's transports and their SSE streams). */
export const egressFetch = ((input: string | URL, init?: RequestInit) =>
  undiciFetch(input, {
    ...init,
    dispatcher: egressAgent(),
  })) as unknown as typeof fetch;
