/**
 * /files/<path>: GET/HEAD read, POST/PUT write (raw body), DELETE. The path
 * is decoded once, here, by the path guard (operations/resolve-path.ts),
 * before the method is looked at.
 */
import type { IncomingMessage } from 'node:http';
import type { DaemonConfig } from '../config.js';
import { MethodNotAllowedError } from '../errors.js';
import type { RouteResult } from '../http/respond.js';
import { deleteFile } from '../operations/delete-file.js';
import { readFile } from '../operations/read-file.js';
import { decodeUrlPath } from '../operations/resolve-path.js';
import { writeFile } from '../operations/write-file.js';

export async function filesRoute(
  req: IncomingMessage,
  rawPath: string,
  query: URLSearchParams,
  config: DaemonConfig,
): Promise<RouteResult> {
  const rel = decodeUrlPath(rawPath.slice('/files/'.length));
  switch (req.method ?? 'GET') {
    case 'GET':
    case 'HEAD': {
      const file = await readFile(config.root, rel);
      return { statusCode: 200, ...file };
    }
    case 'POST':
    case 'PUT':
      return { statusCode: 200, body: await writeFile(config.root, rel, req, config.maxFileBytes) };
    case 'DELETE':
      return {
        statusCode: 200,
        body: await deleteFile(config.root, rel, query.get('recursive') === 'true'),
      };
    default:
      throw new MethodNotAllowedError('GET, POST, PUT, DELETE');
  }
}
