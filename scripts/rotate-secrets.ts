/**
 * `npm run secrets:rotate`: re-encrypts every stored secret (provider API keys
 * and headers, MCP server headers, OAuth settings and tokens, the start-up check value) under
 * SECRETS_KEY, from SECRETS_KEY_PREVIOUS. Safe to stop and run again, and
 * while the api and workers serve (with both keys set). The procedure is in
 * docs/deploy.md ("Rotating SECRETS_KEY").
 */
import { ConfigError, loadConfig } from '../core/config.js';
import { SecretBox } from '../core/crypto/secrets.js';
import { rotateSecrets, SecretsRotationError, type RotationReport } from '../core/crypto/secrets-rotation.js';
import { createDb } from '../core/db/knex.js';
import { isMain } from '../core/is-main.js';

type Env = Record<string, string | undefined>;

/** Runs the rotation against the environment's DATABASE_URL; `print` gets the report, one line at a time. */
export async function rotateSecretsFromEnv(
  env: Env,
  print: (line: string) => void = () => undefined,
  options: { batchSize?: number } = {},
): Promise<RotationReport> {
  const config = loadConfig(env, { require: ['DATABASE_URL', 'SECRETS_KEY'] });
  if (!config.secretsKeyPrevious)
    throw new ConfigError(
      'Invalid configuration: SECRETS_KEY_PREVIOUS must be set to the key being replaced',
    );
  if (config.secretsKeyPrevious.equals(config.secretsKey!))
    throw new ConfigError('Invalid configuration: SECRETS_KEY_PREVIOUS is SECRETS_KEY: nothing to rotate');
  const db = createDb(config.databaseUrl!, { max: 2, name: 'secrets-rotation', ssl: config.database.ssl });
  try {
    const box = new SecretBox(config.secretsKey!, config.secretsKeyPrevious);
    const report = await rotateSecrets(db, box, options);
    for (const line of describe(report)) print(line);
    return report;
  } finally {
    await db.destroy();
  }
}

export function describe(report: RotationReport): string[] {
  const lines = Object.entries(report.columns).map(
    ([column, c]) =>
      `${column}: ${c.reEncrypted} re-encrypted, ${c.alreadyCurrent} already under SECRETS_KEY` +
      (c.undecryptable > 0 ? `, ${c.undecryptable} opened by neither key` : ''),
  );
  for (const { table, id, column } of report.undecryptable)
    lines.push(`  cannot decrypt ${table} ${id} (${column}) with either key`);
  lines.push(`secrets check: ${report.check}`);
  lines.push(
    report.undecryptable.length > 0
      ? 'rotation NOT finished: re-enter or delete the values above through the API, then run again'
      : 'rotation finished: remove SECRETS_KEY_PREVIOUS from every api and worker, then restart them',
  );
  return lines;
}

if (isMain(import.meta.url)) {
  try {
    const report = await rotateSecretsFromEnv(process.env, (line) => process.stdout.write(`${line}\n`));
    process.exitCode = report.undecryptable.length > 0 ? 1 : 0;
  } catch (err) {
    if (!(err instanceof ConfigError || err instanceof SecretsRotationError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
  }
}
