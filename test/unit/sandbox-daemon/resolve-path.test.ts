import fc from 'fast-check';
import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PathEscapeError } from '../../../sandbox-daemon/errors.js';
import {
  checkRelative,
  decodeUrlPath,
  resolveInRoot,
} from '../../../sandbox-daemon/operations/resolve-path.js';

describe('path guard', () => {
  it('rejects traversal in every spelling', () => {
    for (const raw of [
      '..',
      '../etc/passwd',
      'a/../../b',
      '%2e%2e/etc/passwd',
      '%2E%2E%2Fetc',
      'a/%2e%2e/%2e%2e/x',
      '/etc/passwd',
      '%2Fetc%2Fpasswd',
      'a%00b',
    ]) {
      expect(() => decodeUrlPath(raw), raw).toThrow(PathEscapeError);
    }
  });

  it('rejects malformed percent-encoding as a bad request', () => {
    expect(() => decodeUrlPath('%zz')).toThrow(/percent-encoding/);
  });

  it('normalises harmless segments', () => {
    expect(checkRelative('./a//b/./c.txt')).toBe('a/b/c.txt');
    expect(decodeUrlPath('dir/hello%20world.txt')).toBe('dir/hello world.txt');
  });

  it('never accepts a path with a ".." segment, and keeps every accepted one inside the root', () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', '', 'a', 'b c', '...', '..a'),
      fc.string({ maxLength: 4 }).filter((s) => !s.includes('/')),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), (segments) => {
        const rel = segments.join('/');
        let normalised: string;
        try {
          normalised = checkRelative(rel);
        } catch {
          return segments.includes('..') || rel.startsWith('/') || rel.includes('\0');
        }
        const joined = path.resolve('/root-x', normalised);
        return !segments.includes('..') && (joined === '/root-x' || joined.startsWith('/root-x/'));
      }),
    );
  });

  it('rejects symlinks that lead outside, for existing and for new files', async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sbx-guard-')));
    const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sbx-outside-')));
    await writeFile(path.join(outside, 'secret'), 'x');
    await symlink('/etc/passwd', path.join(root, 'passwd'));
    await symlink(outside, path.join(root, 'out'));
    await mkdir(path.join(root, 'in'));
    await symlink(path.join(root, 'in'), path.join(root, 'in-link'));

    await expect(resolveInRoot(root, 'passwd')).rejects.toThrow(PathEscapeError);
    await expect(resolveInRoot(root, 'out/secret')).rejects.toThrow(PathEscapeError);
    await expect(resolveInRoot(root, 'out/new/file')).rejects.toThrow(PathEscapeError);
    await expect(resolveInRoot(root, 'in-link/new.txt')).resolves.toEqual({
      real: path.join(root, 'in', 'new.txt'),
      exists: false,
    });
    await expect(resolveInRoot(root, 'missing/deep/file')).resolves.toEqual({
      real: path.join(root, 'missing/deep/file'),
      exists: false,
    });
  });
});
