/** GET /files/<path>: the raw bytes with a content type guessed from the extension. */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BadRequestError, FileNotFoundError } from '../errors.js';
import { resolveInRoot } from './resolve-path.js';

const CONTENT_TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.py': 'text/x-python; charset=utf-8',
  '.sh': 'text/x-shellscript; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
};

export function contentTypeFor(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export async function readFile(
  root: string,
  rel: string,
): Promise<{ stream: Readable; size: number; contentType: string }> {
  const { real, exists } = await resolveInRoot(root, rel);
  if (!exists) throw new FileNotFoundError(rel);
  // O_NOFOLLOW: `real` has no symlinks left; one appearing now is a race, refuse it.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw new BadRequestError(`"${rel}" is not a regular file`, 'not_a_file');
  }
  return { stream: handle.createReadStream(), size: info.size, contentType: contentTypeFor(real) };
}
