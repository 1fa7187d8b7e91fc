/**
 * Request bodies read whole (JSON), each with a size cap: past it the read
 * stops with a 413 before the rest is buffered. File uploads stream to disk
 * with their own cap (operations/write-file.ts).
 */
import type { IncomingMessage } from 'node:http';
import { BadRequestError, PayloadTooLargeError } from '../errors.js';

/** Cap on a POST /claim body: a token and a number. */
export const CLAIM_MAX_BYTES = 64 * 1024;

export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLargeError(limit);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BadRequestError('body must be valid JSON');
  }
}
