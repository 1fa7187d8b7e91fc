/**
 * The bearer token every request except /health must present. Digests are
 * compared with timingSafeEqual, so the comparison takes the same time
 * whatever the token sent.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export class BearerAuth {
  private tokenDigest: Buffer;

  constructor(token: string) {
    this.tokenDigest = digest(token);
  }

  /** A claimed pool sandbox takes its session's token in place of the pool token. */
  replace(token: string): void {
    this.tokenDigest = digest(token);
  }

  authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    return match !== null && timingSafeEqual(digest(match[1] ?? ''), this.tokenDigest);
  }
}
