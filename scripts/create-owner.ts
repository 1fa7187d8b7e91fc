/**
 * `npm run users:create-owner -- --user-name alice [--display-name "Alice"]`:
 * users mode's one-time bootstrap, for whoever holds DATABASE_URL. Creates
 * the first owner (the password from OWNER_PASSWORD, else read from stdin),
 * refuses when an owner exists, and prints a personal API token of theirs on
 * stdout (alone, for `TOKEN=$(npm run -s users:create-owner -- …)`); what it
 * did goes to stderr.
 */
import { parseArgs } from 'node:util';
import { recordAudit } from '../core/audit/audit-log.js';
import { createFirstOwner, issuePersonalToken } from '../core/auth/first-owner.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../core/auth/passwords.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { createDb } from '../core/db/knex.js';
import { AppError } from '../core/errors.js';
import { isMain } from '../core/is-main.js';

class UsageError extends Error {}

const USAGE =
  'usage: npm run users:create-owner -- --user-name <name> [--display-name <text>]\n' +
  '  the password: OWNER_PASSWORD, else the first line of stdin';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password (the first line of input): ');
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

export async function createOwnerFromEnv(
  argv: string[],
  env: Record<string, string | undefined>,
  log: (line: string) => void,
): Promise<string> {
  let values: { 'user-name'?: string; 'display-name'?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { 'user-name': { type: 'string' }, 'display-name': { type: 'string' } },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const userName = values['user-name']?.trim();
  if (!userName) throw new UsageError(`--user-name is required\n${USAGE}`);
  const password = env.OWNER_PASSWORD ?? (await readStdin());
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
    throw new UsageError(`the password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  const config = loadConfig(env, { require: ['DATABASE_URL'] });
  const db = createDb(config.databaseUrl!, { max: 2, name: 'create-owner', ssl: config.database.ssl });
  try {
    const owner = await createFirstOwner(
      db,
      { userName, password, displayName: values['display-name'] ?? null },
      'any-owner',
    );
    const token = await issuePersonalToken(db, owner.id, 'bootstrap');
    const actor = { kind: 'setup' as const, name: 'users:create-owner', userId: owner.id };
    await recordAudit(db, {
      actor,
      action: 'user.create',
      resourceType: 'user',
      resourceId: owner.id,
      after: { id: owner.id, user_name: owner.user_name, org_role: 'owner' },
      details: { first_owner: true },
    });
    await recordAudit(db, {
      actor,
      action: 'token.create',
      resourceType: 'api_token',
      resourceId: token.id,
      after: { id: token.id, name: 'bootstrap', kind: 'personal', user_id: owner.id },
    });
    if (config.auth.mode !== 'users')
      log(
        'note: AUTH_MODE is not users here; the owner and token count once the API runs with AUTH_MODE=users',
      );
    log(`owner ${owner.user_name} created (${owner.id}); their API token follows on stdout, shown this once`);
    return token.secret;
  } finally {
    await db.destroy();
  }
}

if (isMain(import.meta.url)) {
  try {
    const token = await createOwnerFromEnv(process.argv.slice(2), process.env, (line) =>
      process.stderr.write(`${line}\n`),
    );
    process.stdout.write(`${token}\n`);
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof ConfigError || err instanceof AppError)) throw err;
    const reason = err instanceof AppError ? (err.details.reason as string | undefined) : undefined;
    process.stderr.write(`${reason ?? err.message}\n`);
    process.exitCode = 1;
  }
}
