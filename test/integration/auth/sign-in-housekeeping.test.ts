/**
 * The worker's housekeeping of sign-ins: console sessions and single sign-on
 * flows past their expiry are deleted; live ones, and API tokens (expired or
 * not, their owners still list them), are kept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneExpiredSignIns } from '../../../core/auth/housekeeping.js';
import { credentialDigest, newCredential } from '../../../core/auth/secrets.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { databaseUrl } from '../../helpers/services.js';
import { createTestToken, createTestUser } from '../../helpers/users.js';

describe('housekeeping of console sessions and sign-in flows', () => {
  let db: Db;
  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('deletes what expired, keeps what is live and every API token', async () => {
    const user = await createTestUser(db);
    const session = (expiresAt: Date) => ({
      token_hash: credentialDigest(newCredential('session')),
      csrf_token: 'c',
      user_id: user.id,
      method: 'password',
      expires_at: expiresAt,
    });
    const [expired] = await db('user_sessions')
      .insert(session(new Date(Date.now() - 60_000)))
      .returning<Array<{ id: string }>>('id');
    const [live] = await db('user_sessions')
      .insert(session(new Date(Date.now() + 3_600_000)))
      .returning<Array<{ id: string }>>('id');
    const oldFlow = randomUUID();
    const newFlow = randomUUID();
    await db('oidc_login_flows').insert([
      { state: oldFlow, code_verifier: 'v', nonce: 'n', expires_at: new Date(Date.now() - 1_000) },
      { state: newFlow, code_verifier: 'v', nonce: 'n', expires_at: new Date(Date.now() + 600_000) },
    ]);
    await createTestToken(db, { userId: user.id, expiresAt: new Date(Date.now() - 1_000) });

    expect(await pruneExpiredSignIns(db)).toBeGreaterThanOrEqual(2);

    const sessions = await db('user_sessions').where({ user_id: user.id }).pluck<string[]>('id');
    expect(sessions).toEqual([live!.id]);
    expect(sessions).not.toContain(expired!.id);
    const flows = await db('oidc_login_flows').whereIn('state', [oldFlow, newFlow]).pluck<string[]>('state');
    expect(flows).toEqual([newFlow]);
    const tokens = await db('api_tokens').where({ user_id: user.id }).pluck<string[]>('id');
    expect(tokens).toHaveLength(2);
  });
});
