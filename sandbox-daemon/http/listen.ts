/** Listening on TCP or on a Unix socket (SANDBOX_SOCKET, with its mode); returns the address. */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { DaemonConfig } from '../config.js';

/** `http://host:port` or `unix:<path>`. */
export async function listen(server: Server, config: DaemonConfig): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (config.socket) {
      mkdirSync(path.dirname(config.socket), { recursive: true });
      rmSync(config.socket, { force: true }); // stale socket from a previous container
      server.listen(config.socket, () => {
        chmodSync(config.socket!, config.socketMode);
        resolve();
      });
    } else {
      server.listen(config.port, config.host, () => resolve());
    }
  });
  const addr = server.address();
  return typeof addr === 'string'
    ? `unix:${addr}`
    : `http://${(addr as AddressInfo).address}:${(addr as AddressInfo).port}`;
}
