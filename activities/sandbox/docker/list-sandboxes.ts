/**
 * `list()` of the docker backend: this installation's sandboxes, from their
 * containers and workspace volumes (a session whose container is gone still
 * has its volume: `absent`). The reaper decides from these what to remove.
 */
import type Docker from 'dockerode';
import { daemonHealth } from '../daemon-client.js';
import { LABEL, sessionFromLabels, type SandboxInfo } from '../sandbox-manager.js';
import { inspectContainer } from './engine.js';
import { endpointOf, type ReadinessContext } from './readiness.js';

export interface ListContext extends ReadinessContext {
  docker: Docker;
  /** Labels on everything this manager creates (its installation). */
  ownLabels: Record<string, string>;
  volumeName(name: string): string;
}

export async function listDockerSandboxes(ctx: ListContext): Promise<SandboxInfo[]> {
  const filter = JSON.stringify({
    label: [`${LABEL.sandbox}=1`, ...Object.entries(ctx.ownLabels).map(([k, v]) => `${k}=${v}`)],
  });
  const [containers, volumes] = await Promise.all([
    ctx.docker.listContainers({ all: true, filters: filter }),
    ctx.docker.listVolumes({ filters: filter }),
  ]);
  const volumeLabels = new Map((volumes.Volumes ?? []).map((v) => [v.Name, v.Labels]));
  const byName = new Map<string, SandboxInfo>();
  for (const c of containers) {
    const name = c.Names[0]?.replace(/^\//, '');
    // A container claimed from the pool carries its session on its workspace alias (labels cannot change).
    const session =
      sessionFromLabels(c.Labels) ??
      (name ? sessionFromLabels(volumeLabels.get(ctx.volumeName(name))) : undefined);
    if (!session || !name) continue;
    const running = c.State === 'running';
    let finishedAt: Date | undefined;
    let idleMs: number | undefined;
    if (running) {
      const info = await inspectContainer(ctx.docker, name);
      const endpoint = info && endpointOf(ctx, info, name);
      idleMs = endpoint ? (await daemonHealth(endpoint, 1000))?.idle_ms : undefined;
    } else {
      const info = await inspectContainer(ctx.docker, name);
      finishedAt = info?.State.FinishedAt ? new Date(info.State.FinishedAt) : undefined;
    }
    byName.set(name, {
      name,
      session,
      id: c.Id,
      state: running ? 'running' : 'stopped',
      image: c.Image,
      finishedAt,
      idleMs,
    });
  }
  for (const v of volumes.Volumes ?? []) {
    const session = sessionFromLabels(v.Labels);
    const name = v.Name.replace(/-workspace$/, '');
    if (!session || byName.has(name)) continue;
    byName.set(name, {
      name,
      session,
      id: undefined,
      state: 'absent',
      image: undefined,
      finishedAt: undefined,
      idleMs: undefined,
    });
  }
  return [...byName.values()];
}
