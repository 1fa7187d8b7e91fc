import { isIP } from 'node:net';

/**
 * Which `Host` (and `Origin`) the API answers: the defence against DNS
 * rebinding, where a page on a name the attacker controls is made to resolve
 * to this server and then reads or changes it through the victim's browser.
 * Pure: parsing and matching only; api/middleware/host-check.ts applies it.
 *
 * Hosts are compared by name, whatever the port. Always allowed: the loopback
 * names (`localhost`, `127.x.x.x`, `::1`). Then ALLOWED_HOSTS (exact names,
 * `*.suffix` for subdomains, `*` for anything), PUBLIC_URL's host, and the
 * bind address when it is a specific one. With neither ALLOWED_HOSTS nor
 * PUBLIC_URL and a wildcard bind address (`0.0.0.0`, `::`), any IP address is
 * accepted as Host: a browser sends an IP as Host only for a page whose URL
 * has that IP, which rebinding cannot produce; names are refused.
 */
export interface AllowedHosts {
  /** ALLOWED_HOSTS=`*`: no Host or Origin check at all. */
  any: boolean;
  /** Exact names, lowercase; IPv6 addresses without brackets. */
  names: string[];
  /** From `*.example.com` entries: `.example.com` (subdomains only, not the name itself). */
  suffixes: string[];
  /** Any IP address is accepted as Host (wildcard bind address, nothing configured). */
  anyAddress: boolean;
  /**
   * Nothing configured and the server bound to a non-loopback address: the
   * allow-list was derived from the bind address (the server warns).
   */
  derived: boolean;
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function isName(s: string): boolean {
  return s.length <= 253 && s.split('.').every((l) => LABEL.test(l));
}

/** A name from a Host header, an entry or a URL: lowercase, no trailing dot, IPv6 without brackets. */
function normalise(name: string): string {
  let n = name.toLowerCase();
  if (n.startsWith('[') && n.endsWith(']')) n = n.slice(1, -1);
  if (n.endsWith('.') && !isIP(n)) n = n.slice(0, -1);
  return n;
}

/** One ALLOWED_HOSTS entry, checked: `*`, a name, `*.` and a name, or an IP address (IPv6 with or without brackets). */
function parseEntry(
  raw: string,
): { kind: 'any' } | { kind: 'name'; name: string } | { kind: 'suffix'; suffix: string } {
  const text = raw.trim();
  if (text === '*') return { kind: 'any' };
  if (text.startsWith('*.')) {
    const rest = normalise(text.slice(2));
    if (!isName(rest) || isIP(rest)) throw new Error(`"${text}": after "*." comes a domain name`);
    return { kind: 'suffix', suffix: `.${rest}` };
  }
  const name = normalise(text);
  if (isIP(name) !== 0 || isName(name)) return { kind: 'name', name };
  if (/:\d+$/.test(text)) throw new Error(`"${text}": give the name without a port (every port is allowed)`);
  throw new Error(`"${text}" is not a host name, an IP address, "*.domain" or "*"`);
}

/** Checks ALLOWED_HOSTS (comma-separated); throws naming the first bad entry. */
export function parseAllowedHostsList(value: string): string[] {
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('no entry (leave it unset for the default)');
  for (const e of entries) parseEntry(e);
  return entries;
}

export const WILDCARD_BIND = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/** Loopback: `localhost`, 127.0.0.0/8, `::1` (also IPv4-mapped). */
export function isLoopbackHost(name: string): boolean {
  const n = normalise(name);
  if (n === 'localhost' || n === '::1' || n === '0:0:0:0:0:0:0:1') return true;
  const v4 = n.startsWith('::ffff:') ? n.slice('::ffff:'.length) : n;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

export function allowedHosts(opts: {
  allowedHosts: string | undefined;
  publicUrl: string | undefined;
  bindHost: string;
}): AllowedHosts {
  const result: AllowedHosts = { any: false, names: [], suffixes: [], anyAddress: false, derived: false };
  for (const text of opts.allowedHosts ? parseAllowedHostsList(opts.allowedHosts) : []) {
    const entry = parseEntry(text);
    if (entry.kind === 'any') result.any = true;
    else if (entry.kind === 'suffix') result.suffixes.push(entry.suffix);
    else result.names.push(entry.name);
  }
  if (opts.publicUrl) result.names.push(normalise(new URL(opts.publicUrl).hostname));
  const bind = normalise(opts.bindHost);
  const wildcard = WILDCARD_BIND.has(bind);
  if (!wildcard && !isLoopbackHost(bind)) result.names.push(bind);
  if (!opts.allowedHosts && !opts.publicUrl && !isLoopbackHost(bind)) {
    result.derived = true;
    result.anyAddress = wildcard;
  }
  result.names = [...new Set(result.names)];
  return result;
}

/**
 * The name of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`),
 * normalised; undefined when it is not one.
 */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim();
  let name: string;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0 || !/^(:\d{1,5})?$/.test(h.slice(end + 1))) return undefined;
    name = h.slice(1, end);
    if (isIP(name) !== 6) return undefined;
  } else {
    const m = /^([^:]+)(:\d{1,5})?$/.exec(h);
    if (!m) return undefined;
    name = m[1]!;
  }
  name = normalise(name);
  return isIP(name) !== 0 || isName(name) ? name : undefined;
}

/** Whether a name (from hostOfHeader, or an Origin's hostname) is on the explicit list (loopback included). */
function listed(list: AllowedHosts, name: string): boolean {
  return (
    isLoopbackHost(name) ||
    list.names.includes(name) ||
    list.suffixes.some((s) => name.endsWith(s) && name.length > s.length)
  );
}

/** Whether a request with this `Host` header is answered. */
export function hostAllowed(list: AllowedHosts, header: string | undefined): boolean {
  if (list.any) return true;
  const name = hostOfHeader(header);
  if (name === undefined) return false;
  return listed(list, name) || (list.anyAddress && isIP(name) !== 0);
}

/**
 * Whether a browser request from this `Origin` may change configuration: its
 * host is on the list, or it is the request's own origin (the console, served
 * by this server). `null` (sandboxed frames, some redirects, file: pages) is
 * refused. Any IP address (the wildcard-bind default) is not enough here: a
 * page on another server's IP is another site.
 */
export function originAllowed(list: AllowedHosts, origin: string, hostHeader: string | undefined): boolean {
  if (list.any) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (origin === 'null' || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  if (hostHeader !== undefined && url.host.toLowerCase() === hostHeader.trim().toLowerCase()) return true;
  return listed(list, normalise(url.hostname));
}
