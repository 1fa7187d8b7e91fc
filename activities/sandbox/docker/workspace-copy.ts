/**
 * Copying one session's workspace volume into another's (a forked
 * conversation's). The workspace is a named volume, so it holds the files
 * whether the session's container runs, stopped (idle shutdown) or was
 * removed; the copy never starts either sandbox. A short-lived container of
 * the sandbox image, isolated like a sandbox (no network, no capabilities,
 * the sandbox user), mounts the source read-only and the target, and runs
 * `cp -a`. The target is mounted at /sandbox/workspace so that a fresh
 * volume is initialised from the image with the sandbox user as its owner,
 * exactly as a session's first container would.
 */
import type Docker from 'dockerode';
import { SandboxCopyError } from '../errors.js';
import type { SandboxConfig } from '../sandbox-config.js';
import { sandboxName, sessionLabels, type SandboxSession, type WorkspaceCopy } from '../sandbox-manager.js';
import { forceRemoveContainer, statusCode, tailLogs } from './engine.js';

const SOURCE = '/sandbox/source';
const TARGET = '/sandbox/workspace';

export interface WorkspaceCopyContext {
  docker: Docker;
  config: Pick<SandboxConfig, 'defaultImage' | 'user' | 'limits'>;
  /** The installation's labels (and a test's), put on the target volume and the copying container. */
  ownLabels: Record<string, string>;
  volumeName(name: string): string;
}

/** True when the volume exists. */
async function volumeExists(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).inspect();
    return true;
  } catch (err) {
    if (statusCode(err) === 404) return false;
    throw err;
  }
}

/** Copies `from`'s workspace volume into `to`'s (created, labelled as `to`'s, when absent). */
export async function copyDockerWorkspace(
  ctx: WorkspaceCopyContext,
  from: SandboxSession,
  to: SandboxSession,
): Promise<WorkspaceCopy> {
  const source = ctx.volumeName(sandboxName(from));
  if (!(await volumeExists(ctx.docker, source))) return 'absent';
  const toName = sandboxName(to);
  const target = ctx.volumeName(toName);
  // Creating an existing volume returns it unchanged: a repeated copy overwrites the same files.
  await ctx.docker.createVolume({ Name: target, Labels: { ...sessionLabels(to), ...ctx.ownLabels } });
  // One name per target: a copier a crashed worker left behind is removed before the next one runs.
  const copier = `${toName}-copy`;
  await forceRemoveContainer(ctx.docker, copier);
  try {
    await runCopier(ctx, copier, source, target);
    return 'copied';
  } catch (err) {
    // The target is a new fork's: a failed copy leaves no half workspace for the next attempt to trip on.
    await removeVolume(ctx.docker, target);
    throw err;
  }
}

async function runCopier(ctx: WorkspaceCopyContext, copier: string, source: string, target: string) {
  const id = await createCopier(ctx, copier, source, target);
  try {
    const container = ctx.docker.getContainer(id);
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    if (StatusCode !== 0)
      throw new SandboxCopyError(
        `copying the workspace failed (cp exit ${StatusCode}): ${await tailLogs(ctx.docker, id)}`,
      );
  } finally {
    await forceRemoveContainer(ctx.docker, id);
  }
}

/** Best effort: a volume that cannot be removed now stays, and the next copy overwrites what it holds. */
async function removeVolume(docker: Docker, name: string): Promise<void> {
  await docker
    .getVolume(name)
    .remove()
    .catch(() => undefined);
}

async function createCopier(
  ctx: WorkspaceCopyContext,
  name: string,
  source: string,
  target: string,
): Promise<string> {
  const { limits } = ctx.config;
  try {
    const container = await ctx.docker.createContainer({
      name,
      Image: ctx.config.defaultImage,
      // --remove-destination: a copy a dead worker left half done holds read-only files cp could not overwrite.
      Cmd: ['cp', '-a', '--remove-destination', `${SOURCE}/.`, `${TARGET}/`],
      User: ctx.config.user,
      Labels: { ...ctx.ownLabels },
      HostConfig: {
        NetworkMode: 'none',
        Mounts: [
          { Type: 'volume', Source: source, Target: SOURCE, ReadOnly: true },
          { Type: 'volume', Source: target, Target: TARGET },
        ],
        Memory: limits.memoryMb * 1024 * 1024,
        MemorySwap: limits.memoryMb * 1024 * 1024,
        PidsLimit: limits.pids,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        RestartPolicy: { Name: 'no' },
      },
    });
    return container.id;
  } catch (err) {
    const why =
      statusCode(err) === 404
        ? `sandbox image "${ctx.config.defaultImage}" not found (build it with npm run sandbox:image)`
        : (err as Error).message;
    throw new SandboxCopyError(`cannot create the container copying the workspace: ${why}`, { cause: err });
  }
}
