/**
 * HTTP client for the sandbox daemon (over a Unix socket or TCP). The wire
 * shapes are the daemon's own (sandbox-daemon/contracts.ts), imported as types
 * only: no daemon code runs in the manager.
 * No keep-alive: a Unix-socket connect costs microseconds, and fresh
 * connections avoid the "server closed the idle socket" race on reuse.
 */
import { traceHeaders } from '../../core/telemetry/tool-spans.js';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  SandboxExecutionUnknownError,
  SandboxFileNotFoundError,
  SandboxRequestError,
  SandboxUnavailableError,
} from './errors.js';
import type { CommandResult, ErrorBody } from '../../sandbox-daemon/contracts.js';
import type { SandboxEndpoint } from './sandbox-manager.js';

export interface DaemonResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * The request never reached the daemon (socket missing, connection refused):
 * safe to resend, even for exec. Anything else that breaks an exec (reset,
 * timeout, closed mid-answer) is a SandboxUnavailableError and is never
 * resent here: the command may be running; a retry with the same `id` finds it.
 */
export class DaemonUnreachableError extends Error {
  constructor(
    readonly errno: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'DaemonUnreachableError';
  }
}

/** The daemon answered 401: the token does not match this incarnation. */
export class DaemonAuthRejectedError extends Error {
  override name = 'DaemonAuthRejectedError';
}

const NOT_REACHED = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENOTSOCK',
]);

export function daemonRequest(
  endpoint: SandboxEndpoint,
  options: {
    method: string;
    path: string;
    token?: string;
    body?: Buffer | string;
    contentType?: string;
    timeoutMs: number;
  },
): Promise<DaemonResponse> {
  // The daemon writes the caller's trace id into its log line for this request.
  const headers: Record<string, string | number> = { ...traceHeaders() };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/octet-stream';
    headers['content-length'] = Buffer.byteLength(options.body);
  }
  const target =
    endpoint.kind === 'unix'
      ? { socketPath: endpoint.socketPath, path: options.path }
      : (() => {
          const u = new URL(endpoint.url);
          return { host: u.hostname, port: Number(u.port || 80), path: options.path };
        })();
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = httpRequest({ ...target, method: options.method, headers, agent: false }, (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', (err) =>
        reject(
          new SandboxUnavailableError(`sandbox daemon connection broke: ${err.message}`, { cause: err }),
        ),
      );
    });
    req.setTimeout(options.timeoutMs, () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!responded && err.code !== undefined && NOT_REACHED.has(err.code))
        reject(new DaemonUnreachableError(err.code, err.message));
      else
        reject(new SandboxUnavailableError(`sandbox daemon request failed: ${err.message}`, { cause: err }));
    });
    req.end(options.body);
  });
}

/** Turns a non-2xx daemon answer into the manager's error classes; `executionId` names the exec's `id`, if any. */
export function raiseForStatus(res: DaemonResponse, what: string, executionId?: string): void {
  if (res.status >= 200 && res.status < 300) return;
  let code = 'unknown';
  let message = res.body.toString('utf8').slice(0, 500);
  try {
    // Checked field by field: the answer may come from something other than our daemon.
    const parsed = JSON.parse(message) as { error?: Partial<ErrorBody['error']> };
    code = parsed.error?.code ?? code;
    message = parsed.error?.message ?? message;
  } catch {
    // Not our daemon's JSON: keep the raw text.
  }
  if (res.status === 401) throw new DaemonAuthRejectedError(message);
  if (res.status === 404 && code === 'not_found') throw new SandboxFileNotFoundError(`${what}: ${message}`);
  if (res.status === 404 && code === 'unknown_execution')
    throw new SandboxExecutionUnknownError(executionId ?? '', `${what}: ${message}`);
  if (res.status >= 400 && res.status < 500)
    throw new SandboxRequestError(res.status, code, `${what}: ${message}`);
  throw new SandboxUnavailableError(`${what}: daemon answered ${res.status} ${message}`);
}

export async function daemonHealth(
  endpoint: SandboxEndpoint,
  timeoutMs = 1000,
): Promise<{ idle_ms: number; running: number; pool?: 'waiting' | 'claimed' } | undefined> {
  try {
    const res = await daemonRequest(endpoint, { method: 'GET', path: '/health', timeoutMs });
    if (res.status !== 200) return undefined;
    return JSON.parse(res.body.toString('utf8')) as {
      idle_ms: number;
      running: number;
      pool?: 'waiting' | 'claimed';
    };
  } catch {
    return undefined;
  }
}

export function encodeFilePath(rel: string): string {
  return '/files/' + rel.split('/').map(encodeURIComponent).join('/');
}

export function parseCommandResult(res: DaemonResponse): CommandResult {
  return JSON.parse(res.body.toString('utf8')) as CommandResult;
}
