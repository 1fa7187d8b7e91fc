import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';

/**
 * A TLS-terminating proxy in front of a plaintext server, standing in for a
 * TLS Temporal cluster (the dev server has no TLS) or a PostgreSQL that
 * demands client certificates (the machine's shared server is not ours to
 * reconfigure). It demands a client certificate signed by `ca` (unless
 * `requireClientCert` is false) and forwards the decrypted bytes.
 */
export interface TlsProxyOptions {
  target: { host: string; port: number };
  cert: string;
  key: string;
  /** The CA client certificates must be signed by. */
  ca: string;
  requireClientCert?: boolean;
  /**
   * h2: TLS from the first byte, ALPN h2 (gRPC; the worker's client insists on it).
   * postgres: PostgreSQL's SSLRequest (answered 'S') first, then TLS; the target then gets the
   * client's startup message in plaintext, which the local server accepts.
   */
  protocol: 'h2' | 'postgres';
}

export interface TlsProxy {
  port: number;
  /** host:port */
  address: string;
  /** Common names of the client certificates accepted, one per connection. */
  accepted: string[];
  /** Why handshakes were refused (OpenSSL's reasons). */
  refused: string[];
  close(): Promise<void>;
}

const SSL_REQUEST_CODE = 80877103;

export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  const accepted: string[] = [];
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const requireCert = options.requireClientCert ?? true;
  const tlsServer = tls.createServer(
    {
      cert: options.cert,
      key: options.key,
      ca: options.ca,
      requestCert: requireCert,
      rejectUnauthorized: requireCert,
      ...(options.protocol === 'h2' ? { ALPNProtocols: ['h2'] } : {}),
    },
    (client) => {
      track(client);
      const peer = client.getPeerCertificate();
      accepted.push(typeof peer.subject?.CN === 'string' ? peer.subject.CN : '');
      const upstream = net.connect(options.target.port, options.target.host);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    },
  );
  tlsServer.on('tlsClientError', (err) => refused.push(err.message));

  const front =
    options.protocol === 'h2'
      ? tlsServer
      : net.createServer((socket) => {
          track(socket);
          socket.once('data', (first: Buffer) => {
            if (first.length < 8 || first.readInt32BE(4) !== SSL_REQUEST_CODE) {
              refused.push('plaintext PostgreSQL connection refused');
              socket.destroy();
              return;
            }
            socket.write('S');
            tlsServer.emit('connection', socket);
          });
        });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;
  return {
    port,
    address: `127.0.0.1:${port}`,
    accepted,
    refused,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}
