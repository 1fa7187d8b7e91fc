/** DELETE /files/<path>: removes a file; a folder only with ?recursive=true. */
import { lstat, rm, unlink } from 'node:fs/promises';
import { BadRequestError, FileNotFoundError } from '../errors.js';
import { resolveInRoot } from './resolve-path.js';

export async function deleteFile(
  root: string,
  rel: string,
  recursive: boolean,
): Promise<{ path: string; deleted: true }> {
  if (rel === '') throw new BadRequestError('refusing to delete the sandbox root');
  const { real, exists } = await resolveInRoot(root, rel);
  if (!exists) throw new FileNotFoundError(rel);
  const info = await lstat(real);
  if (info.isDirectory()) {
    if (!recursive)
      throw new BadRequestError(`"${rel}" is a directory; pass ?recursive=true`, 'is_directory');
    await rm(real, { recursive: true });
  } else {
    await unlink(real);
  }
  return { path: rel, deleted: true };
}
