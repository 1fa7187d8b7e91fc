/**
 * Starting a sandbox container and waiting for its daemon: where the daemon is
 * reached (socket, host port or published port) and polling its /health until
 * it answers, the container vanishes (a peer replaced it) or the deadline passes.
 */
import path from 'node:path';
import type Docker from 'dockerode';
import type { ContainerInspectInfo } from 'dockerode';
import { daemonHealth } from '../daemon-client.js';
import { SandboxNotReadyError, SandboxStartError } from '../errors.js';
import { LABEL, type SandboxEndpoint, type SandboxHandle } from '../sandbox-manager.js';
import { DAEMON_PORT, SOCKET_DIR, type DockerNetworkMode } from './container-plan.js';
import { sleep, statusCode, tailLogs } from './engine.js';

/** What readiness needs from the manager. */
export interface ReadinessContext {
  docker: Docker;
  mode: DockerNetworkMode;
  /** SANDBOX_READY_TIMEOUT_MS */
  readyTimeoutMs: number;
  /** The host folder of a session's socket (SANDBOX_HOST_DIR/<name>). */
  sessionDir(name: string): string;
}

/** Where the container's daemon answers; undefined while a published port is not bound yet. */
export function endpointOf(
  ctx: ReadinessContext,
  info: ContainerInspectInfo,
  name: string,
): SandboxEndpoint | undefined {
  if (ctx.mode === 'none') {
    // A container claimed from the pool keeps the socket folder it was created with.
    const dir = info.Mounts.find((m) => m.Destination === SOCKET_DIR)?.Source ?? ctx.sessionDir(name);
    return { kind: 'unix', socketPath: path.join(dir, 'daemon.sock') };
  }
  if (ctx.mode === 'host') return { kind: 'http', url: `http://127.0.0.1:${info.Config.Labels[LABEL.port]}` };
  const binding = info.NetworkSettings.Ports[`${DAEMON_PORT}/tcp`]?.[0];
  return binding ? { kind: 'http', url: `http://127.0.0.1:${binding.HostPort}` } : undefined;
}

/** Starts the container (already started is fine) and waits for its daemon; undefined when a peer removed it. */
export async function startAndWait(
  ctx: ReadinessContext,
  id: string,
  name: string,
  token: string,
  created: boolean,
): Promise<SandboxHandle | undefined> {
  try {
    await ctx.docker.getContainer(id).start();
  } catch (err) {
    const code = statusCode(err);
    if (code === 404) return undefined; // removed by a peer meanwhile
    if (code !== 304)
      throw new SandboxStartError(`cannot start sandbox ${name}: ${(err as Error).message}`, {
        cause: err,
      });
  }
  return waitReady(ctx, id, name, token, created);
}

/**
 * Polls the daemon's /health until it answers. Returns undefined when the
 * container vanished (a peer replaced it) so the caller re-inspects; throws
 * when it exited on its own (a daemon that cannot start) or on timeout.
 */
export async function waitReady(
  ctx: ReadinessContext,
  id: string,
  name: string,
  token: string,
  created: boolean,
): Promise<SandboxHandle | undefined> {
  const deadline = Date.now() + ctx.readyTimeoutMs;
  let endpoint: SandboxEndpoint | undefined;
  for (let poll = 0; ; poll++) {
    if (endpoint === undefined || poll % 10 === 0) {
      let info: ContainerInspectInfo;
      try {
        info = await ctx.docker.getContainer(id).inspect();
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
      if (!info.State.Running) {
        // Exited right after we saw it running: an idle shutdown racing us is normal; a fresh one failing is not.
        if (!created) return undefined;
        const logs = await tailLogs(ctx.docker, id);
        throw new SandboxStartError(
          `sandbox ${name} exited during start (code ${info.State.ExitCode}): ${logs}`,
        );
      }
      endpoint = endpointOf(ctx, info, name);
    }
    if (endpoint && (await daemonHealth(endpoint, 1000))) return { name, id, endpoint, token, created };
    if (Date.now() > deadline)
      throw new SandboxNotReadyError(`sandbox ${name} did not become ready within ${ctx.readyTimeoutMs} ms`);
    await sleep(poll < 40 ? 10 : 100);
  }
}
