/** Composition: picks the backend from the configuration (SANDBOX_ENABLED, SANDBOX_BACKEND). */
import type { SandboxLogger } from './base-sandbox-manager.js';
import { DockerSandboxManager, type DockerSandboxOptions } from './docker/manager.js';
import { SandboxNotConfiguredError } from './errors.js';
import { KubernetesSandboxManager, type KubernetesSandboxOptions } from './kubernetes/manager.js';
import { ProcessSandboxManager, type ProcessSandboxOptions } from './process/manager.js';
import type { SandboxConfig } from './sandbox-config.js';
import type { SandboxManager } from './sandbox-manager.js';
import { loadOrCreateTokenSecret } from './sandbox-token.js';

/** Stands in when SANDBOX_ENABLED is off: every call fails with SandboxDisabledError's message. */
export class DisabledSandboxManager implements SandboxManager {
  readonly backend = 'disabled' as const;
  private fail(): Promise<never> {
    return Promise.reject(new SandboxNotConfiguredError());
  }
  ensure = () => this.fail();
  exec = () => this.fail();
  execPython = () => this.fail();
  readFile = () => this.fail();
  writeFile = () => this.fail();
  deleteFile = () => this.fail();
  release = () => this.fail();
  destroy = () => this.fail();
  list = () => this.fail();
  close = () => Promise.resolve();
}

export interface CreateSandboxManagerOptions {
  docker?: DockerSandboxOptions;
  kubernetes?: KubernetesSandboxOptions;
  process?: ProcessSandboxOptions;
}

export async function createSandboxManager(
  config: SandboxConfig,
  logger: SandboxLogger,
  options: CreateSandboxManagerOptions = {},
): Promise<SandboxManager> {
  if (!config.enabled) return new DisabledSandboxManager();
  const secret = config.tokenSecret ?? (await loadOrCreateTokenSecret(config.dataDir));
  switch (config.backend) {
    case 'docker': {
      const manager = new DockerSandboxManager(config, logger, secret, options.docker);
      manager.startPool(); // in the background: the first new session should not wait for a container start
      return manager;
    }
    case 'kubernetes':
      return new KubernetesSandboxManager(config, logger, secret, options.kubernetes);
    case 'process':
      logger.warn(
        { backend: 'process' },
        'SANDBOX_BACKEND=process runs commands on this host with NO isolation; use it only on a laptop without Docker',
      );
      return new ProcessSandboxManager(config, logger, secret, options.process);
  }
}
