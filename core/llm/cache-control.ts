import type { CacheControl } from './types.js';

const TTLS = new Set(['5m', '1h']);

/**
 * What is wrong with a `cache_control` value, or undefined when it is valid:
 * `{type: 'ephemeral'}` with an optional `ttl` of `5m` or `1h`, nothing else
 * (Anthropic refuses any other key). `null` is valid and means no breakpoint
 * (the Anthropic SDK types allow it). `at` is the sub-field at fault
 * (`''` for the value itself), for the surface to name in its own path style.
 */
export function cacheControlProblem(value: unknown): { at: string; message: string } | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    return { at: '', message: "must be an object such as {type: 'ephemeral'}" };
  const cc = value as Record<string, unknown>;
  if (cc.type !== 'ephemeral') return { at: 'type', message: "must be 'ephemeral'" };
  if (cc.ttl !== undefined && (typeof cc.ttl !== 'string' || !TTLS.has(cc.ttl)))
    return { at: 'ttl', message: "must be '5m' or '1h'" };
  const extra = Object.keys(cc).find((k) => k !== 'type' && k !== 'ttl');
  if (extra !== undefined) return { at: extra, message: 'is not a cache_control field' };
  return undefined;
}

/** A validated cache_control value as the internal shape (null and absent both mean none). */
export function toCacheControl(value: unknown): CacheControl | undefined {
  if (value === undefined || value === null || cacheControlProblem(value)) return undefined;
  const { ttl } = value as { ttl?: CacheControl['ttl'] };
  return ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' };
}
