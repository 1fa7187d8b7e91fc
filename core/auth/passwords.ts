import { hash, verify, type Algorithm } from '@node-rs/argon2';

/**
 * Local passwords, stored as argon2id hashes (PHC strings: the parameters and
 * salt travel with the hash, so raising the cost later keeps old ones valid).
 * The cost is OWASP's minimum for argon2id: 19 MiB, 2 passes, 1 lane.
 */
const ARGON2ID = 2 as Algorithm;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Long enough to resist guessing, short enough that hashing one stays cheap. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1_024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * A hash of nothing anyone knows, verified against when the user is unknown,
 * deactivated or has no password: a failed login then takes as long whether
 * the user name exists or not.
 */
let dummyHash: Promise<string> | undefined;

/** Whether `password` matches `stored`; with no stored hash, spends the same time and answers false. */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword(`no user ${Math.random()}`);
  const against = stored ?? (await dummyHash);
  try {
    const matched = await verify(against, password);
    return matched && stored != null;
  } catch {
    // A stored value that is not a PHC string never matches.
    return false;
  }
}
