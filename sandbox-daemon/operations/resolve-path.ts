/**
 * The path guard: every file operation and every `workdir` goes through here.
 * Two layers: the lexical check rejects `..`, absolute paths, encoded
 * traversal and NUL before touching the disk; the realpath check rejects
 * symlinks (anywhere along the path) that lead outside the root.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError, PathEscapeError } from '../errors.js';

/** Decodes a raw URL path tail (`a/b%20c.txt`) into a relative path, or throws. */
export function decodeUrlPath(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new BadRequestError('malformed percent-encoding in path');
  }
  return checkRelative(decoded);
}

/** Lexical check of a relative path; returns it normalised (no empty or `.` segments). */
export function checkRelative(rel: string): string {
  if (rel.includes('\0')) throw new PathEscapeError('path contains a NUL byte');
  if (rel.startsWith('/') || path.isAbsolute(rel))
    throw new PathEscapeError('absolute paths are not allowed');
  const segments = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new PathEscapeError('".." is not allowed in paths');
  return segments.join('/');
}

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + path.sep);
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Resolves `rel` under `root` following symlinks. Returns the real path when
 * the target exists, or the lexical path when it does not (after checking that
 * its deepest existing ancestor is inside the root). `exists` tells which.
 */
export async function resolveInRoot(root: string, rel: string): Promise<{ real: string; exists: boolean }> {
  const realRoot = await realpath(root);
  const lexical = path.join(realRoot, checkRelative(rel));
  try {
    const real = await realpath(lexical);
    if (!inside(realRoot, real))
      throw new PathEscapeError('path resolves outside the sandbox root through a symlink');
    return { real, exists: true };
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  // Missing target: its nearest existing ancestor decides (it may be a symlink out).
  let ancestor = path.dirname(lexical);
  for (;;) {
    try {
      const real = await realpath(ancestor);
      if (!inside(realRoot, real))
        throw new PathEscapeError('path resolves outside the sandbox root through a symlink');
      return { real: path.join(real, path.relative(ancestor, lexical)), exists: false };
    } catch (err) {
      if (!isMissing(err)) throw err;
      if (ancestor === realRoot) throw err;
      ancestor = path.dirname(ancestor);
    }
  }
}
