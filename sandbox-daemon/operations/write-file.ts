/** POST /files/<path>: writes the raw body, creating parent folders. */
import { constants } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BadRequestError, PayloadTooLargeError } from '../errors.js';
import { resolveInRoot } from './resolve-path.js';

export async function writeFile(
  root: string,
  rel: string,
  body: Readable,
  maxBytes: number,
): Promise<{ path: string; size: number }> {
  if (rel === '') throw new BadRequestError('a file path is required');
  const { real } = await resolveInRoot(root, rel);
  await mkdir(path.dirname(real), { recursive: true });
  // mkdir may have walked through a symlink created meanwhile: check again.
  const checked = await resolveInRoot(root, rel);
  // Write beside the target then rename, so a reader never sees half a file.
  const tmp = path.join(
    path.dirname(checked.real),
    `.${path.basename(checked.real)}.${process.pid}.${Date.now()}.part`,
  );
  const handle = await open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new PayloadTooLargeError(maxBytes);
      await handle.write(chunk);
    }
    await handle.close();
    await rename(tmp, checked.real);
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'EISDIR')
      throw new BadRequestError(`"${rel}" is a directory`, 'not_a_file');
    throw err;
  }
  return { path: rel, size };
}
