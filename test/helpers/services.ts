import { inject } from 'vitest';

const CI = process.env.CI === 'true';

/** The per-run database; integration tests cannot run without it. */
export function databaseUrl(): string {
  const url = inject('databaseUrl');
  if (!url) throw new Error('no test database: the global setup did not provide PostgreSQL');
  return url;
}

export function temporalAddress(): string | null {
  return inject('temporalAddress');
}

/**
 * For `describe.skipIf(...)`: true when Temporal is missing on a laptop. Under
 * CI the global setup already failed in that case, so nothing can skip there.
 */
export function noTemporal(): boolean {
  const missing = temporalAddress() === null;
  if (missing && CI) throw new Error('Temporal is required under CI=true');
  return missing;
}
