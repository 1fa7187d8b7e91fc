import { BlockList, isIP } from 'node:net';

/**
 * Which destinations outgoing calls to LLM providers and MCP servers may
 * reach (EGRESS_ALLOW / EGRESS_DENY). Pure: parsing and matching only; the
 * check at connect time, after DNS resolution, is in egress-agent.ts.
 *
 * Rules: a destination is refused when it matches a deny entry, by the name in
 * the URL or by the address actually connected to; otherwise, when allow
 * entries exist, it must match one of them (by name or by address). Deny wins.
 */

/** One entry of EGRESS_ALLOW / EGRESS_DENY, or a built-in deny entry. */
export type EgressEntry = { text: string; port?: number; builtin?: string } & (
  | { kind: 'address'; address: string; prefix: number; family: 'ipv4' | 'ipv6' }
  /** `pattern` is a lowercase name, or `*.` and a suffix; `resolve`: also match the name's addresses. */
  | { kind: 'host'; pattern: string; resolve?: boolean }
);

/** Plain data (it lives in Config); compileEgressPolicy turns it into matchers. */
export interface EgressSettings {
  allow: EgressEntry[];
  deny: EgressEntry[];
}

/** Thrown when the egress policy refuses a destination; retrying cannot help (a 403 / non-retryable failure). */
export class EgressDeniedError extends Error {
  override name = 'EgressDeniedError';
  readonly code = 'EGRESS_DENIED';
}

/**
 * Thrown when a provider answers with a redirect to a destination the egress
 * policy refuses. Nothing follows it (the gateway follows no redirect); the
 * provider's answer is unusable, so a 502 rather than a 403, and as final
 * as any refusal.
 */
export class EgressRedirectDeniedError extends EgressDeniedError {
  override name = 'EgressRedirectDeniedError';
}

/** The EgressDeniedError behind a client library's wrapping (`cause` chains, AggregateError), if any. */
export function findEgressDenial(err: unknown): EgressDeniedError | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    if (e instanceof EgressDeniedError) return e;
    if (e instanceof AggregateError) {
      const inner = e.errors.map(findEgressDenial).find(Boolean);
      if (inner) return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

function parseAddress(body: string, text: string, port?: number): EgressEntry {
  const [address = '', prefixText, extra] = body.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) throw new Error(`"${text}" is not a valid IP address or CIDR`);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max)
    throw new Error(`"${text}" has an invalid prefix length (0 to ${max})`);
  return {
    kind: 'address',
    address,
    prefix,
    family: version === 4 ? 'ipv4' : 'ipv6',
    text,
    ...(port !== undefined ? { port } : {}),
  };
}

function parseEntry(text: string): EgressEntry {
  let body = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    body = bracketed[1]!;
    portText = bracketed[2];
  } else if (text.split(':').length === 2) {
    [body, portText] = text.split(':') as [string, string];
  }
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535)
      throw new Error(`"${text}" has an invalid port (1 to 65535)`);
  }
  if (bracketed || body.includes('/') || isIP(body) !== 0 || body.includes(':'))
    return parseAddress(body, text, port);
  const pattern = body.toLowerCase().replace(/\.$/, '');
  const labels = (pattern.startsWith('*.') ? pattern.slice(2) : pattern).split('.');
  if (!labels.every((l) => LABEL.test(l)) || pattern.length > 253)
    throw new Error(`"${text}" is not a CIDR, an IP address or a host pattern (name or *.suffix)`);
  // An all-numeric last label makes URL parsers read the name as an IPv4 address: a typo.
  if (/^\d+$/.test(labels.at(-1)!)) throw new Error(`"${text}" is not a valid IP address`);
  return { kind: 'host', pattern, text, ...(port !== undefined ? { port } : {}) };
}

/**
 * Parses a comma-separated list (spaces around entries ignored). `none` (deny
 * list only) drops the built-in entries. Throws an Error whose message names
 * the bad entry.
 */
export function parseEgressList(value: string, opts: { allowNone?: boolean } = {}) {
  const entries: EgressEntry[] = [];
  let none = false;
  for (const raw of value.split(',')) {
    const text = raw.trim();
    if (text === '') continue;
    if (text.toLowerCase() === 'none') {
      if (!opts.allowNone) throw new Error('"none" is only meaningful in EGRESS_DENY');
      none = true;
      continue;
    }
    entries.push(parseEntry(text));
  }
  return { entries, none };
}

/** Link-local (cloud metadata services live there), AWS's IPv6 metadata address, and "this host". */
const BUILTIN_ADDRESSES: Array<[string, string]> = [
  ['169.254.0.0/16', 'link-local addresses and cloud metadata'],
  ['fe80::/10', 'link-local addresses'],
  ['fd00:ec2::254', 'the cloud metadata service'],
  // Connecting to 0.0.0.0 or :: reaches this machine: a way around a deny of 127.0.0.0/8.
  ['0.0.0.0/8', 'unspecified addresses, which reach this machine'],
  ['::/128', 'unspecified addresses, which reach this machine'],
];

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/** The platform's own endpoint `host:port` as deny entries (on loopback: the port on every loopback address). */
function platformEntries(host: string, port: number, what: string): EgressEntry[] {
  const builtin = `the platform's ${what}`;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(h) || (isIP(h) === 4 && h.startsWith('127.'))) {
    return [
      { ...parseAddress('127.0.0.0/8', `127.0.0.0/8:${port}`, port), builtin },
      { ...parseAddress('::1', `[::1]:${port}`, port), builtin },
    ];
  }
  if (isIP(h) !== 0) return [{ ...parseAddress(h, `${host}:${port}`, port), builtin }];
  return [
    { kind: 'host', pattern: h.replace(/\.$/, ''), port, resolve: true, text: `${h}:${port}`, builtin },
  ];
}

function hostPort(url: string, defaultPort: number): { host: string; port: number } | undefined {
  try {
    const u = new URL(url);
    // A Unix-socket DATABASE_URL has no host: nothing to deny.
    return u.hostname ? { host: u.hostname, port: u.port ? Number(u.port) : defaultPort } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The settings from validated environment values: EGRESS_ALLOW as given;
 * EGRESS_DENY added to the built-in entries (link-local and metadata
 * addresses, unspecified addresses, and the platform's own PostgreSQL,
 * Temporal frontend and Temporal UI ports) unless it contains `none`.
 */
export function egressSettings(env: {
  allow?: string;
  deny?: string;
  databaseUrl?: string;
  temporalAddress?: string;
  temporalUiUrl?: string;
}): EgressSettings {
  const allow = parseEgressList(env.allow ?? '').entries;
  const deny = parseEgressList(env.deny ?? '', { allowNone: true });
  if (deny.none) return { allow, deny: deny.entries };
  const builtins: EgressEntry[] = BUILTIN_ADDRESSES.map(([cidr, why]) => ({
    ...parseAddress(cidr, cidr),
    builtin: why,
  }));
  const pg = env.databaseUrl ? hostPort(env.databaseUrl, 5432) : undefined;
  if (pg) builtins.push(...platformEntries(pg.host, pg.port, 'PostgreSQL (DATABASE_URL)'));
  const temporal = env.temporalAddress ? hostPort(`grpc://${env.temporalAddress}`, 7233) : undefined;
  if (temporal)
    builtins.push(...platformEntries(temporal.host, temporal.port, 'Temporal (TEMPORAL_ADDRESS)'));
  const uiUrl = env.temporalUiUrl;
  const ui = uiUrl ? hostPort(uiUrl, uiUrl.startsWith('https:') ? 443 : 80) : undefined;
  if (ui) builtins.push(...platformEntries(ui.host, ui.port, 'Temporal UI (TEMPORAL_UI_URL)'));
  return { allow, deny: [...builtins, ...deny.entries] };
}

/* ------------------------------------------------------------------------ */
/* Matching                                                                  */
/* ------------------------------------------------------------------------ */

export interface CompiledEntry {
  entry: EgressEntry;
  list?: BlockList;
}

export interface EgressPolicy {
  readonly settings: EgressSettings;
  readonly deny: CompiledEntry[];
  readonly allow: CompiledEntry[];
}

export function compileEgressPolicy(settings: EgressSettings): EgressPolicy {
  const compile = (entry: EgressEntry): CompiledEntry => {
    if (entry.kind !== 'address') return { entry };
    const list = new BlockList();
    list.addSubnet(entry.address, entry.prefix, entry.family);
    return { entry, list };
  };
  return { settings, deny: settings.deny.map(compile), allow: settings.allow.map(compile) };
}

/** `::ffff:a.b.c.d` (however written) as a.b.c.d, so IPv4 entries match it. */
export function normalizeAddress(address: string): string {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(?:0:)?(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(a);
  if (!mapped) return a;
  if (mapped[1]) return mapped[1];
  const hi = parseInt(mapped[2]!, 16);
  const lo = parseInt(mapped[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

const portMatches = (entry: EgressEntry, port: number) => entry.port === undefined || entry.port === port;

function nameMatches(entry: EgressEntry, host: string): boolean {
  if (entry.kind !== 'host') return false;
  const name = host.toLowerCase().replace(/\.$/, '');
  return entry.pattern.startsWith('*.') ? name.endsWith(entry.pattern.slice(1)) : name === entry.pattern;
}

function addressMatches(c: CompiledEntry, address: string): boolean {
  if (!c.list) return false;
  const a = normalizeAddress(address);
  const version = isIP(a);
  return version !== 0 && c.list.check(a, version === 4 ? 'ipv4' : 'ipv6');
}

/** How a destination is named in messages: the host as written in the URL, never what it resolved to. */
export const destination = (host: string, port: number) =>
  `${host.includes(':') ? `[${host}]` : host}:${port}`;

export function deniedMessage(entry: EgressEntry, host: string, port: number): string {
  const by = entry.builtin ? `the built-in EGRESS_DENY entry for ${entry.builtin}` : 'EGRESS_DENY';
  return `egress to ${destination(host, port)} is denied by ${by}`;
}

/** Before DNS: a deny entry naming the host refuses it. Returns the refusal message. */
export function refusalByName(policy: EgressPolicy, host: string, port: number): string | undefined {
  if (isIP(host) !== 0) return undefined;
  const hit = policy.deny.find((c) => portMatches(c.entry, port) && nameMatches(c.entry, host));
  return hit ? deniedMessage(hit.entry, host, port) : undefined;
}

/**
 * For the address about to be connected to (an IP literal, or what `host`
 * resolved to): a deny entry covering it refuses it; with allow entries, the
 * name or the address must match one. Built-in entries that must be resolved
 * are the caller's job (see `resolvableDenies`).
 */
export function refusalByAddress(
  policy: EgressPolicy,
  host: string,
  address: string,
  port: number,
): string | undefined {
  const hit = policy.deny.find((c) => portMatches(c.entry, port) && addressMatches(c, address));
  if (hit) return deniedMessage(hit.entry, host, port);
  if (policy.allow.length === 0) return undefined;
  const allowed = policy.allow.some(
    (c) => portMatches(c.entry, port) && (nameMatches(c.entry, host) || addressMatches(c, address)),
  );
  return allowed ? undefined : `egress to ${destination(host, port)} is not permitted by EGRESS_ALLOW`;
}

/** Deny entries on `port` that also match the addresses their name resolves to (the platform's own hosts). */
export function resolvableDenies(
  policy: EgressPolicy,
  port: number,
): Array<{ name: string; entry: EgressEntry }> {
  const out: Array<{ name: string; entry: EgressEntry }> = [];
  for (const { entry } of policy.deny) {
    if (entry.kind === 'host' && entry.resolve && portMatches(entry, port))
      out.push({ name: entry.pattern, entry });
  }
  return out;
}
