/**
 * POST /claim: a pool sandbox (SANDBOX_POOL=1) waits, with its own idle
 * timeout, until a manager claims it for a session; the claim brings the
 * session's token and idle timeout. Once only.
 */
import type { ClaimRequest } from '../contracts.js';
import { BadRequestError, DaemonError } from '../errors.js';
import type { Logger } from '../logging.js';

export class PoolClaim {
  private claimed: boolean;

  constructor(
    private readonly pool: boolean,
    /** Takes the session's token and idle timeout in place of the pool's. */
    private readonly take: (token: string, idleTimeoutMs: number) => void,
    private readonly logger: Logger,
  ) {
    this.claimed = !pool;
  }

  /** For /health: absent unless this is a pool sandbox. */
  state(): 'claimed' | 'waiting' | undefined {
    if (!this.pool) return undefined;
    return this.claimed ? 'claimed' : 'waiting';
  }

  claim(body: unknown): { claimed: true } {
    if (!this.pool) throw new DaemonError(404, 'not_found', 'this sandbox is not a pool sandbox');
    if (this.claimed) throw new DaemonError(409, 'already_claimed', 'this pool sandbox is already claimed');
    const { token, idle_timeout_ms: idle } = body as { [K in keyof ClaimRequest]?: unknown };
    if (typeof token !== 'string' || token.length < 16)
      throw new BadRequestError('"token" must be a string of at least 16 characters');
    if (typeof idle !== 'number' || !Number.isInteger(idle) || idle < 0)
      throw new BadRequestError('"idle_timeout_ms" must be a non-negative integer');
    this.claimed = true;
    this.take(token, idle);
    this.logger.info('claimed', { idle_timeout_ms: idle });
    return { claimed: true };
  }
}
