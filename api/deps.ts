import { ChangeFeed } from './cache/change-feed.js';
import type { Config } from '../core/config.js';
import { SecretBox } from '../core/crypto/secrets.js';
import { createDb, createSidePool, type Db } from '../core/db/knex.js';
import type { Logger } from '../core/logger.js';
import { GatewayPolicyService } from '../core/metering/gateway-policy.js';
import { UsageWriter } from '../core/metering/usage-writer.js';
import { temporalConnectionOptions } from '../core/temporal/connection-options.js';
import { KeyResolver } from './gateway/keys.js';
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
  /** Postgres LISTEN/NOTIFY feed that keeps in-memory caches correct across replicas. */
  changes: ChangeFeed;
  /** Gateway usage rows, written in batches off the request path. */
  usage: UsageWriter;
  /** The gateway's rate limits, budgets and usage log; holds this replica's leases, given back on close. */
  metering: GatewayPolicyService;
  /** Presented virtual key secrets resolved to keys, cached; a key's writer clears it at once. */
  gatewayKeys: KeyResolver;
}

export function createDeps(config: Config, logger: Logger): AppDeps {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set');
  if (!config.secretsKey) throw new Error('SECRETS_KEY is not set');
  const db = createDb(config.databaseUrl, { ...config.database.pool, ssl: config.database.ssl });
  const temporal = new TemporalClientHolder(temporalSettings(config), temporalConnectionOptions(config));
  const changes = new ChangeFeed(config.databaseUrl, logger, config.database.ssl);
  changes.start();
  const usage = new UsageWriter(
    db,
    logger,
    {},
    createSidePool(config.databaseUrl, {
      max: 1,
      ssl: config.database.ssl,
      onError: (err) => logger.warn({ err }, 'the usage rows connection failed; reconnecting'),
    }),
  );
  const secrets = new SecretBox(config.secretsKey, config.secretsKeyPrevious);
  const metering = new GatewayPolicyService(db, { usageWriter: usage, leases: config.gateway.leases });
  const gatewayKeys = new KeyResolver(db, changes);
  return { config, db, logger, secrets, temporal, changes, usage, metering, gatewayKeys };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.metering
    .close()
    .catch((err: unknown) => deps.logger.error({ err }, 'giving back gateway leases failed'));
  await deps.usage.close().catch((err: unknown) => deps.logger.error({ err }, 'final usage flush failed'));
  await Promise.allSettled([deps.changes.stop(), deps.db.destroy(), deps.temporal.close()]);
}
