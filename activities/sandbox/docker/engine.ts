/**
 * The Docker engine calls the manager and the pool share, with the status
 * codes they act on: another manager process may remove, create or start the
 * same container at any moment, so a 404 or a 409 is often an answer, not a
 * failure.
 */
import type Docker from 'dockerode';
import type { ContainerInspectInfo } from 'dockerode';

/** The HTTP status of a failed engine call (dockerode puts it on the error). */
export function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The container, or undefined when there is none by that id or name. */
export async function inspectContainer(
  docker: Docker,
  idOrName: string,
): Promise<ContainerInspectInfo | undefined> {
  try {
    return await docker.getContainer(idOrName).inspect();
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

/** Removes the container, running or not; already gone or being removed counts as done. */
export async function forceRemoveContainer(docker: Docker, idOrName: string): Promise<void> {
  try {
    await docker.getContainer(idOrName).remove({ force: true });
  } catch (err) {
    const code = statusCode(err);
    // 404: already gone; 409: a removal is already in progress.
    if (code !== 404 && code !== 409) throw err;
  }
}

/** Docker's log stream without a TTY is multiplexed: 8-byte frame headers before each chunk. */
export function demuxLogs(buf: Buffer): string {
  const out: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    out.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(out).toString('utf8');
}

/** The container's last lines of output as one line, for an error message. */
export async function tailLogs(docker: Docker, id: string): Promise<string> {
  try {
    const buf = await docker.getContainer(id).logs({ stdout: true, stderr: true, tail: 20, follow: false });
    return demuxLogs(buf).trim().split('\n').slice(-5).join(' | ').slice(0, 1000) || '(no output)';
  } catch {
    return '(logs unavailable)';
  }
}
