/**
 * What a session's container needs from the host before it is created: the
 * folder bind-mounted for the daemon's socket, and on host networking a free
 * loopback port.
 */
import { chmod, chown, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import type Docker from 'dockerode';
import { SandboxStartError } from '../errors.js';
import { LABEL } from '../sandbox-manager.js';

/**
 * The per-session folder bind-mounted at /sandbox/run for the daemon's socket.
 * As root we hand it to the sandbox user (`uid:gid`, 0700); otherwise we cannot
 * chown, so it is world-writable and the socket 0666 — the bearer token still guards it.
 */
export async function prepareSessionDir(
  dir: string,
  user: string,
): Promise<{ path: string; socketMode: string }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const [uid, gid] = user.split(':').map(Number) as [number, number];
  if (process.getuid?.() === 0) {
    await chown(dir, uid, gid);
    await chmod(dir, 0o700);
    return { path: dir, socketMode: '600' };
  }
  await chmod(dir, 0o777);
  return { path: dir, socketMode: '666' };
}

/**
 * Host networking: a free loopback port in `range`, starting from one derived
 * from the name (and the attempt) so peers rarely collide. Ports other
 * sandboxes have in their labels count as taken even when nothing listens yet.
 */
export async function pickPort(
  docker: Docker,
  range: { from: number; to: number },
  name: string,
  round: number,
): Promise<number> {
  const { from, to } = range;
  const size = to - from + 1;
  const taken = new Set(
    (await docker.listContainers({ all: true, filters: JSON.stringify({ label: [LABEL.port] }) })).map((c) =>
      Number(c.Labels[LABEL.port]),
    ),
  );
  const start = (parseInt(name.slice(-8), 16) + round * 7919) % size;
  for (let i = 0; i < size; i++) {
    const port = from + ((start + i) % size);
    if (!taken.has(port) && (await portFree(port))) return port;
  }
  throw new SandboxStartError(`no free port in SANDBOX_PORT_RANGE ${from}-${to}`);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
