/**
 * Loop guard. Every call this platform makes to a provider carries the number
 * of gateway hops behind it, plus one; the gateway refuses a request that has
 * already made MAX_GATEWAY_HOPS. A provider whose base_url is this gateway
 * (itself, or another installation pointing back) would otherwise call itself
 * until a rate limit or the call's timeout stopped it.
 */
export const HOPS_HEADER = 'x-agent-server-hops';

/** Enough for a gateway in front of another one; a loop is refused on its third pass. */
export const MAX_GATEWAY_HOPS = 3;

/**
 * The incoming hop count: 0 when the header is absent; undefined when it is
 * not a small non-negative integer (the caller answers 400 naming the header).
 */
export function parseHops(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return 0;
  return /^\d{1,3}$/.test(value) ? Number(value) : undefined;
}
