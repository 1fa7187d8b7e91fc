import type { Config } from './config.js';
import { createDb, type Db } from './db/knex.js';
import type { Logger } from './logger.js';
import { ProjectsRepository } from './repositories/projects.repository.js';
import { ProjectsService } from './services/projects.service.js';
import { TemporalClientHolder } from './temporal/client.js';
import { temporalSettings } from '../temporal.config.js';

/** Everything the API needs, built once per process (the composition root of the API). */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  temporal: TemporalClientHolder;
  services: {
    projects: ProjectsService;
  };
}

export function createDeps(config: Config, logger: Logger): AppDeps {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set');
  const db = createDb(config.databaseUrl);
  const temporal = new TemporalClientHolder(temporalSettings(config));
  return {
    config,
    db,
    logger,
    temporal,
    services: {
      projects: new ProjectsService(new ProjectsRepository(db)),
    },
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await Promise.allSettled([deps.db.destroy(), deps.temporal.close()]);
}
