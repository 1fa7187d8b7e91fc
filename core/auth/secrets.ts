import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The credentials users mode hands out, each a random secret with a prefix
 * saying what it is (so a leaked one is recognisable to secret scanners):
 * personal (`ags_pat_`) and service (`ags_svc_`) API tokens, console session
 * cookies (`ags_ses_`) and one-time setup tokens (`ags_setup_`). Only the
 * SHA-256 digest is stored: the secrets have 256 bits of entropy, so a fast
 * digest is enough (passwords, which do not, get argon2id).
 */
export const CREDENTIAL_PREFIX = {
  personal: 'ags_pat_',
  service: 'ags_svc_',
  session: 'ags_ses_',
  setup: 'ags_setup_',
} as const;

export type CredentialKind = keyof typeof CREDENTIAL_PREFIX;

export function newCredential(kind: CredentialKind): string {
  return CREDENTIAL_PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** The stored form of a credential: hex SHA-256. */
export function credentialDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Equal without leaking where they differ (both are digested first, so lengths match). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** A bearer token from `Authorization: Bearer …`, or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  const token = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
  return token === '' ? undefined : token;
}
