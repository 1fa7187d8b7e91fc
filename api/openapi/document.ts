import { createRequire } from 'node:module';
import { ChangeFeed } from '../cache/change-feed.js';
import { loadConfig } from '../../core/config.js';
import { SecretBox } from '../../core/crypto/secrets.js';
import { createDb } from '../../core/db/knex.js';
import { createLogger } from '../../core/logger.js';
import { GatewayPolicyService } from '../../core/metering/gateway-policy.js';
import { KeyResolver } from '../gateway/keys.js';
import { UsageWriter } from '../../core/metering/usage-writer.js';
import { temporalSettings } from '../../temporal.config.js';
import type { AppDeps } from '../deps.js';
import { buildRouters } from '../routes/index.js';
import { TemporalClientHolder } from '../temporal/client.js';
import { buildOpenApi } from './openapi.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The OpenAPI document without a running server: the routers are built over
 * dependencies that never connect (Knex, the change feed and the Temporal
 * client all connect lazily), since the document depends only on the routes'
 * declarations. The console's typed client is generated from it.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const url = 'postgres://unused@127.0.0.1:1/unused';
  const config = loadConfig({
    DATABASE_URL: url,
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    SECRETS_KEY: Buffer.alloc(32).toString('base64'),
  });
  const logger = createLogger('silent');
  const db = createDb(url);
  const changes = new ChangeFeed(url, logger);
  const deps: AppDeps = {
    config,
    db,
    logger,
    secrets: new SecretBox(config.secretsKey!),
    temporal: new TemporalClientHolder(temporalSettings(config)),
    changes,
    usage: new UsageWriter(db, logger),
    metering: new GatewayPolicyService(db),
    gatewayKeys: new KeyResolver(db, changes),
  };
  try {
    return buildOpenApi(
      buildRouters(deps).flatMap((r) => r.routes),
      { version: pkg.version },
    );
  } finally {
    await db.destroy();
  }
}
