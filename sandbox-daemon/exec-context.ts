/**
 * What commands run with: the root, the output cap, the environment, and the
 * fork server (operations/fork-server.ts) kept running beside the daemon.
 */
import type { DaemonConfig } from './config.js';
import type { Logger } from './logging.js';
import { PYTHON, type ExecContext } from './operations/exec-command.js';
import { ForkServer } from './operations/fork-server.js';

/** Env for commands: the daemon's own, minus its token and settings, which commands have no business reading. */
function commandEnv(env: NodeJS.ProcessEnv, root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !k.startsWith('SANDBOX_') && !k.startsWith('NODE_')) out[k] = v;
  }
  out.PATH ??= '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  out.HOME ??= root;
  out.LANG ??= 'C.UTF-8';
  out.SANDBOX_ROOT = root;
  return out;
}

export function createExecContext(config: DaemonConfig, env: NodeJS.ProcessEnv): ExecContext {
  return { root: config.root, maxOutputBytes: config.maxOutputBytes, baseEnv: commandEnv(env, config.root) };
}

/** The fork server can run here: enabled, and the image has python3. */
export function forkServerWanted(config: DaemonConfig): boolean {
  return config.forkServer && PYTHON.startsWith('/');
}

/**
 * Starts the fork server and restarts it when it stops, up to 5 times, a
 * second apart, unless the daemon is stopping; meanwhile commands use spawn.
 */
export function startForkServer(exec: ExecContext, logger: Logger, stopping: () => boolean): void {
  let restarts = 0;
  const start = () => {
    const server = new ForkServer(PYTHON, (reason) => {
      logger.warn('fork server stopped; commands use spawn until it is back', { reason });
      if (stopping() || restarts++ >= 5) return;
      setTimeout(() => !stopping() && start(), 1_000).unref();
    });
    exec.forkServer = server;
    server.start();
  };
  start();
}
