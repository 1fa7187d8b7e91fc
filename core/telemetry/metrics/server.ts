import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from '../metrics.js';
import { PROMETHEUS_CONTENT_TYPE, scrapeAllowed } from './prometheus.js';

export interface MetricsServerOptions {
  port: number;
  host: string;
  /** The bearer token a scrape must present (METRICS_TOKEN or ADMIN_TOKEN); undefined: open. */
  token: string | undefined;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Answers a scrape: 401 without the token when one is configured, else the metrics (500 if collecting fails). */
export async function answerScrape(
  registry: MetricsRegistry,
  authorization: string | undefined,
  opts: { token: string | undefined },
): Promise<{ status: number; type: string; body: string }> {
  if (!scrapeAllowed(authorization, opts))
    return { status: 401, type: 'text/plain; charset=utf-8', body: 'Unauthorized\n' };
  try {
    return { status: 200, type: PROMETHEUS_CONTENT_TYPE, body: await registry.scrape() };
  } catch {
    return { status: 500, type: 'text/plain; charset=utf-8', body: 'Internal server error\n' };
  }
}

/**
 * The worker's `/metrics` (WORKER_METRICS_PORT): a bare node:http server,
 * nothing else on it. Bound to HOST like the API.
 */
export async function startMetricsServer(
  registry: MetricsRegistry,
  opts: MetricsServerOptions,
): Promise<MetricsServer> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('Method not allowed\n');
      return;
    }
    void answerScrape(registry, req.headers.authorization, opts).then((a) => {
      const headers: Record<string, string> = { 'content-type': a.type };
      if (a.status === 401) headers['www-authenticate'] = 'Bearer';
      res.writeHead(a.status, headers).end(req.method === 'HEAD' ? undefined : a.body);
    });
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
