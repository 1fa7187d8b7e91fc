/**
 * Per-sandbox bearer tokens, derived as HMAC-SHA256(secret, sandbox name).
 * Deriving instead of storing means a second manager process (or replica, or
 * the Kubernetes backend on another host) recovers the token of a sandbox it
 * did not create without any shared store, and no secret sits in a label. The
 * secret is SANDBOX_TOKEN_SECRET, or one generated once into DATA_DIR (0600).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export function deriveToken(secret: string, name: string): string {
  return createHmac('sha256', secret).update(`agent-sandbox-token:v1:${name}`).digest('base64url');
}

/** Reads the secret file, creating it atomically when missing: two processes racing here end up with the same secret. */
export async function loadOrCreateTokenSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'sandbox-token-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  try {
    await link(tmp, file); // atomic, fails when another process won
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(tmp, { force: true });
  }
  return (await readFile(file, 'utf8')).trim();
}
