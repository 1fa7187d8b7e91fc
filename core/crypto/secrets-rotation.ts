import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { checkValueKey } from './secrets-check.js';
import type { SecretBox } from './secrets.js';

/**
 * Every column holding values encrypted with SECRETS_KEY (primary key `id`).
 * A new encrypted column must be listed here or a rotation leaves it under the
 * old key: test/integration/secrets-rotation.test.ts compares this list with
 * the schema's `*_enc` columns.
 */
export const ENCRYPTED_COLUMNS: ReadonlyArray<{ table: string; columns: readonly string[]; key?: string }> = [
  { table: 'providers', columns: ['api_key_enc', 'headers_enc'] },
  { table: 'mcp_servers', columns: ['headers_enc', 'oauth_enc'] },
  { table: 'a2a_agents', columns: ['headers_enc', 'oauth_enc'] },
  { table: 'webhooks', columns: ['secret_enc'] },
  { table: 'run_webhooks', columns: ['secret_enc'] },
  { table: 'a2a_push_configs', columns: ['token_enc', 'credentials_enc'], key: 'pk' },
  { table: 'mcp_oauth_credentials', columns: ['client_info_enc', 'tokens_enc'] },
  // Flows live ten minutes, but one open across a rotation must still complete.
  { table: 'mcp_oauth_flows', columns: ['code_verifier_enc'], key: 'state_hash' },
];

export interface ColumnCounts {
  reEncrypted: number;
  alreadyCurrent: number;
  undecryptable: number;
}

export interface RotationReport {
  /** Keyed `table.column`. */
  columns: Record<string, ColumnCounts>;
  /** Values neither key opens (ids only): the rotation stays unfinished while there are any. */
  undecryptable: Array<{ table: string; id: string; column: string }>;
  /** The start-up check value: re-encrypted last, and only when every secret is under the new key. */
  check: 'rotated' | 'already current' | 'absent' | 'left under the previous key';
}

/** The rotation cannot start: it says why in one line. */
export class SecretsRotationError extends Error {
  override name = 'SecretsRotationError';
}

export interface RotationOptions {
  /** Rows per transaction: each batch is locked (FOR UPDATE) only while it is re-encrypted. */
  batchSize?: number;
}

/**
 * Re-encrypts every stored secret under the box's current key (SECRETS_KEY)
 * from its previous key (SECRETS_KEY_PREVIOUS). Idempotent and resumable: a
 * value the current key already opens is left alone, so a run stopped half way
 * (or run twice, or by two operators at once) finishes the job the next time.
 * Servers keep working throughout: they hold both keys and write under the
 * new one, and each batch's rows are locked so a concurrent edit is never
 * overwritten with the old plaintext.
 */
export async function rotateSecrets(
  db: Db,
  box: SecretBox,
  options: RotationOptions = {},
): Promise<RotationReport> {
  if (!box.hasPreviousKey)
    throw new SecretsRotationError(
      'SECRETS_KEY_PREVIOUS must be set to the key being replaced (and differ from SECRETS_KEY)',
    );
  const check = await db('secrets_check').where({ id: 1 }).first();
  if (check && !checkValueKey(box, check.check_value))
    throw new SecretsRotationError(
      'Neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS matches the key this database was set up with: nothing was changed',
    );
  const report: RotationReport = { columns: {}, undecryptable: [], check: 'absent' };
  for (const { table, columns, key } of ENCRYPTED_COLUMNS) {
    for (const column of columns) report.columns[`${table}.${column}`] = zeroCounts();
    await rotateTable(db, box, { table, key: key ?? 'id' }, columns, report, options);
  }
  report.check = await rotateCheckValue(db, box, report.undecryptable.length > 0);
  return report;
}

const zeroCounts = (): ColumnCounts => ({ reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 });

type Row = Record<string, string | null>;
/** A table and its primary key column. */
type Target = { table: string; key: string };

async function rotateTable(
  db: Db,
  box: SecretBox,
  target: Target,
  columns: readonly string[],
  report: RotationReport,
  options: RotationOptions,
): Promise<void> {
  const batchSize = options.batchSize ?? 500;
  let after: string | undefined;
  for (;;) {
    // Counted per batch and added once it has committed: a failed batch changes nothing.
    const batch = await db.transaction((trx) => rotateBatch(trx, box, target, columns, after, batchSize));
    for (const [column, counts] of Object.entries(batch.counts)) {
      const total = report.columns[`${target.table}.${column}`]!;
      total.reEncrypted += counts.reEncrypted;
      total.alreadyCurrent += counts.alreadyCurrent;
      total.undecryptable += counts.undecryptable;
    }
    report.undecryptable.push(...batch.undecryptable);
    if (batch.last === undefined) return;
    after = batch.last;
  }
}

async function rotateBatch(
  trx: Knex.Transaction,
  box: SecretBox,
  { table, key }: Target,
  columns: readonly string[],
  after: string | undefined,
  batchSize: number,
): Promise<{
  counts: Record<string, ColumnCounts>;
  undecryptable: RotationReport['undecryptable'];
  last: string | undefined;
}> {
  const query = trx(table)
    .select(key, ...columns)
    .where((q) => {
      for (const column of columns) void q.orWhereNotNull(column);
    })
    .orderBy(key)
    .limit(batchSize)
    .forUpdate();
  if (after !== undefined) void query.andWhere(key, '>', after);
  const rows = (await query) as Row[];
  const counts = Object.fromEntries(columns.map((c) => [c, zeroCounts()]));
  const undecryptable: RotationReport['undecryptable'] = [];
  for (const row of rows) {
    const patch: Record<string, string> = {};
    for (const column of columns) {
      const stored = row[column];
      if (stored === null || stored === undefined) continue;
      const opened = box.tryOpen(stored);
      if (!opened) {
        counts[column]!.undecryptable++;
        undecryptable.push({ table, id: row[key]!, column });
      } else if (opened.key === 'current') {
        counts[column]!.alreadyCurrent++;
      } else {
        patch[column] = box.encrypt(opened.plaintext);
        counts[column]!.reEncrypted++;
      }
    }
    // updated_at is left alone: what the value means has not changed.
    if (Object.keys(patch).length > 0) await trx(table).where(key, row[key]!).update(patch);
  }
  return { counts, undecryptable, last: rows.length === batchSize ? rows.at(-1)![key]! : undefined };
}

/**
 * Last, so that a check value under the new key means every secret is: a
 * server started with SECRETS_KEY alone then passes its start-up check only
 * once nothing is left under the old key.
 */
async function rotateCheckValue(
  db: Db,
  box: SecretBox,
  unfinished: boolean,
): Promise<RotationReport['check']> {
  return db.transaction(async (trx) => {
    const row = (await trx('secrets_check').where({ id: 1 }).forUpdate().first()) as
      { check_value: string } | undefined;
    if (!row) return 'absent';
    const opened = box.open(row.check_value);
    if (opened.key === 'current') return 'already current';
    if (unfinished) return 'left under the previous key';
    await trx('secrets_check')
      .where({ id: 1 })
      .update({ check_value: box.encrypt(opened.plaintext) });
    return 'rotated';
  });
}
