import type { Db } from '../db/knex.js';

/** From one address, this many times a user name's allowance: a shared NAT is not one guesser. */
const PER_ADDRESS_FACTOR = 10;

export interface LoginThrottle {
  maxFailures: number;
  windowSeconds: number;
}

/**
 * Seconds until another password sign-in may be tried, or 0: the failed
 * sign-ins of the window are the audit log's `auth.login_failed` rows, so the
 * count is the same on every replica and survives restarts. Counted per user
 * name (guessing one account's password) and per address (trying one
 * password on many accounts). A right password does not skip the wait: it
 * would tell the guesser it was right.
 */
export async function loginRetryAfter(
  db: Db,
  throttle: LoginThrottle,
  userName: string,
  ip: string | undefined,
): Promise<number> {
  const since = new Date(Date.now() - throttle.windowSeconds * 1000);
  const failures = db('audit_events').where('action', 'auth.login_failed').where('at', '>', since);
  const [byName, byAddress] = await Promise.all([
    failures
      .clone()
      .whereRaw('lower(actor_name) = lower(?)', [userName])
      .orderBy('at', 'desc')
      .limit(throttle.maxFailures)
      .pluck<Date[]>('at'),
    ip
      ? failures
          .clone()
          .where('ip', ip)
          .orderBy('at', 'desc')
          .limit(throttle.maxFailures * PER_ADDRESS_FACTOR)
          .pluck<Date[]>('at')
      : Promise.resolve([] as Date[]),
  ]);
  const waits = [
    byName.length >= throttle.maxFailures ? byName.at(-1) : undefined,
    byAddress.length >= throttle.maxFailures * PER_ADDRESS_FACTOR ? byAddress.at(-1) : undefined,
  ].map((oldest) =>
    oldest ? Math.ceil((oldest.getTime() + throttle.windowSeconds * 1000 - Date.now()) / 1000) : 0,
  );
  return Math.max(0, ...waits);
}
