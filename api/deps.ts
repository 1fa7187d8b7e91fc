import type { Config } from './config.js';
import { SecretBox } from './crypto/secrets.js';
import { createDb, type Db } from './db/knex.js';
import type { Logger } from './logger.js';
import { TemporalClientHolder } from './temporal/client.js';
import { temporalSettings } from '../temporal.config.js';

/**
 * The infrastructure the API needs, built once per process. Routers build
 * their own repositories and services from it (see routes/index.ts).
 */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  secrets: SecretBox;
  temporal: TemporalClientHolder;
}

export function createDeps(config: Config, logger: Logger): AppDeps {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set');
  if (!config.secretsKey) throw new Error('SECRETS_KEY is not set');
  const db = createDb(config.databaseUrl);
  const temporal = new TemporalClientHolder(temporalSettings(config));
  return { config, db, logger, secrets: new SecretBox(config.secretsKey), temporal };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await Promise.allSettled([deps.db.destroy(), deps.temporal.close()]);
}
