/**
 * The router: maps a request to an operation and returns what to send, never
 * touching the socket itself. Authentication and activity tracking live in
 * server.ts; everything here runs only for authenticated requests.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { DaemonConfig } from './config.js';
import { parseExecBody } from './contracts.js';
import { BadRequestError, DaemonError, PayloadTooLargeError } from './errors.js';
import { deleteFile } from './operations/delete-file.js';
import { execCommand, type ExecContext } from './operations/exec-command.js';
import { execFingerprint, type ExecRegistry } from './operations/exec-registry.js';
import { readFile } from './operations/read-file.js';
import { decodeUrlPath } from './operations/resolve-path.js';
import { writeFile } from './operations/write-file.js';

export type RouteResult =
  { status: number; json: unknown } | { status: number; stream: Readable; size: number; contentType: string };

export interface RouteDeps {
  config: DaemonConfig;
  exec: ExecContext;
  /** Executions by caller-chosen id (requests with `id`). */
  executions: ExecRegistry;
  /** Registers a running command's killer so shutdown can stop it. */
  trackProcess: (kill: () => void) => () => void;
  /** POST /claim: a pool sandbox takes its session's token and idle timeout (server.ts). */
  claim: (body: unknown) => unknown;
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLargeError(limit);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BadRequestError('body must be valid JSON');
  }
}

function methodNotAllowed(allowed: string): DaemonError {
  return new DaemonError(405, 'method_not_allowed', `allowed: ${allowed}`);
}

export async function route(req: IncomingMessage, deps: RouteDeps): Promise<RouteResult> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  // Keep the raw (still percent-encoded) path: decoding happens once, in the path guard.
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = new URLSearchParams(queryAt === -1 ? '' : url.slice(queryAt + 1));
  const method = req.method ?? 'GET';

  if (rawPath === '/exec/bash' || rawPath === '/exec/python') {
    if (method !== 'POST') throw methodNotAllowed('POST');
    const kind = rawPath === '/exec/bash' ? 'bash' : 'python';
    const body = await readJson(req, deps.config.maxJsonBytes);
    const parsed = parseExecBody(body, kind === 'bash' ? 'command' : 'script', deps.config);
    const start = () => execCommand(deps.exec, kind, parsed.source, parsed, deps.trackProcess);
    if (parsed.id === undefined) return { status: 200, json: await start() };
    const { result, reused } = await deps.executions.run(
      parsed.id,
      execFingerprint(kind, parsed.source, parsed.workdir, parsed.env),
      parsed.attachOnly,
      start,
    );
    return { status: 200, json: reused ? { ...result, reused: true } : result };
  }

  if (rawPath === '/claim') {
    if (method !== 'POST') throw methodNotAllowed('POST');
    return { status: 200, json: deps.claim(await readJson(req, 64 * 1024)) };
  }

  if (rawPath === '/files' || rawPath.startsWith('/files/')) {
    const rel = decodeUrlPath(rawPath.slice('/files/'.length));
    switch (method) {
      case 'GET':
      case 'HEAD': {
        const file = await readFile(deps.config.root, rel);
        return { status: 200, ...file };
      }
      case 'POST':
      case 'PUT':
        return { status: 200, json: await writeFile(deps.config.root, rel, req, deps.config.maxFileBytes) };
      case 'DELETE':
        return {
          status: 200,
          json: await deleteFile(deps.config.root, rel, query.get('recursive') === 'true'),
        };
      default:
        throw methodNotAllowed('GET, POST, PUT, DELETE');
    }
  }

  throw new DaemonError(404, 'not_found', `no route for ${method} ${rawPath}`);
}
