/**
 * Entry point of the bundled daemon (dist/daemon.mjs): reads the environment,
 * starts the server, exits 0 after idle shutdown or SIGTERM so the container
 * stops cleanly, and 1 when it cannot start.
 */
import { loadDaemonConfig } from './config.js';
import { createLogger } from './logging.js';
import { createDaemon } from './server.js';

const logger = createLogger();

async function main(): Promise<void> {
  const config = loadDaemonConfig(process.env);
  const daemon = await createDaemon(config, { logger });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info('signal', { signal });
      void daemon.close();
    });
  }
  await daemon.closed;
  process.exit(0);
}

main().catch((err: unknown) => {
  logger.error('cannot start', { error: (err as Error).message });
  process.exit(1);
});
