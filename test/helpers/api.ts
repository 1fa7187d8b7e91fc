import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import { startApiServer, type ApiServer } from '../../api/server.js';
import { LogCapture } from './log-capture.js';
import { databaseUrl, temporalAddress } from './services.js';

export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Envelope<T = unknown> {
  error: boolean;
  message: string;
  data: T;
  status: number;
  errorDetails: Record<string, unknown> & {
    fields?: Array<{ field: string; message: string; type: string }>;
  };
}

export interface TestApi {
  url: string;
  server: ApiServer;
  logs: LogCapture;
  config: Config;
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpResult<Envelope<T>>>;
  close(): Promise<void>;
}

/**
 * Starts the real API on a free port against the run's Postgres and Temporal; logs are captured.
 * Every trace is stored (`parentbased_always_on`) unless the test sets OTEL_TRACES_SAMPLER: tests
 * look at the spans of the requests they make.
 */
export async function startTestApi(env: Record<string, string | undefined> = {}): Promise<TestApi> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl(),
    TEMPORAL_ADDRESS: temporalAddress() ?? '127.0.0.1:1',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    PORT: '0',
    LOG_LEVEL: 'info',
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    ...env,
  });
  const logs = new LogCapture();
  const server = await startApiServer(config, createLogger(config.logLevel, logs));
  const request = async <T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${server.url}${path}`, init);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: tests look at `text`
    }
    return { status: res.status, headers: res.headers, body: parsed as Envelope<T>, text };
  };
  return { url: server.url, server, logs, config, request, close: () => server.close() };
}
