import type { Context } from 'koa';
import { readBodyBytes } from './body-reader.js';

/**
 * The request body as bytes, for routes taking non-JSON bodies, at most
 * `limit` bytes (413 past it). The same reader as JSON bodies
 * (body-reader.ts): decompression, the process's in-flight byte cap and the
 * idle timeout apply alike.
 */
export function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  return readBodyBytes(ctx, limit);
}
