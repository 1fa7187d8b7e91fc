import { createServer } from 'node:net';

/**
 * Ports this process has handed out: the OS may give a just-closed port to
 * the next bind to port 0, and two components of one test given the same
 * port fail at start-up (seen: TEMPORAL_PORT equal to EMBEDDED_PG_PORT).
 */
const handedOut = new Set<number>();

/** A port the OS reports free on 127.0.0.1 right now, never one this process was given before. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await boundPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function boundPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
