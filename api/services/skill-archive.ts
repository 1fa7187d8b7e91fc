/**
 * Reads an uploaded skill zip into files, defensively: entries are counted
 * before anything is inflated, inflated bytes are counted as they arrive (a
 * zip bomb stops at the cap, whatever sizes its headers claim), and symlinks,
 * special files, encrypted entries, absolute paths and ".." are refused
 * without being read; every inflated entry must match its CRC-32. The skill rules themselves are in skill-files.ts.
 */
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ValidationError, type FieldError } from '../../core/errors.js';
import { SKILL_LIMITS, normalizeTree, skillPathProblem, type SkillFile } from './skill-files.js';

// Part of yauzl's API since 2.10 (decodes CP437/UTF-8 names), missing from @types/yauzl.
const getFileNameLowLevel = (
  yauzl as unknown as {
    getFileNameLowLevel: (flags: number, name: Buffer, extraFields: unknown[], strict: boolean) => string;
  }
).getFileNameLowLevel;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

const archiveError = (message: string, type = 'skill.archive') =>
  ValidationError.field('body', message, type);

const tooLarge = () =>
  archiveError(
    `the archive inflates to more than ${SKILL_LIMITS.totalBytes} bytes (the cap on a skill's files)`,
    'skill.too_large',
  );

function fromBuffer(buf: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      buf,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

/** The next central-directory entry, or undefined at the end. */
function nextEntry(zip: ZipFile): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: Entry) => {
      done();
      resolve(e);
    };
    const onEnd = () => {
      done();
      resolve(undefined);
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

function openStream(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream)));
  });
}

/** Inflates one entry, giving up as soon as the running total passes the cap. */
async function inflate(zip: ZipFile, entry: Entry, budget: { left: number }): Promise<Buffer> {
  const stream = await openStream(zip, entry);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      budget.left -= buf.length;
      if (budget.left < 0) throw tooLarge();
      chunks.push(buf);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}

/** Why an entry is refused before reading it (symlink, device, encryption, method), or undefined. */
function entryProblem(entry: Entry, name: string): string | undefined {
  const madeOnUnix = entry.versionMadeBy >> 8 === 3;
  const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const kind = mode & S_IFMT;
  if (madeOnUnix && kind === S_IFLNK) return 'symbolic links are not allowed in a skill';
  if (madeOnUnix && kind !== 0 && kind !== S_IFREG && kind !== S_IFDIR && !name.endsWith('/'))
    return 'only regular files are allowed in a skill';
  if (entry.isEncrypted()) return 'encrypted entries are not supported';
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    return `compression method ${entry.compressionMethod} is not supported (use deflate or store)`;
  return undefined;
}

/**
 * The regular files of a zip, top folder stripped when there is one. Throws
 * ValidationError (400, field `body` or `files.<path>`) for anything refused.
 */
export async function readSkillArchive(buf: Buffer): Promise<SkillFile[]> {
  let zip: ZipFile;
  try {
    zip = await fromBuffer(buf);
  } catch (err) {
    throw archiveError(`the body is not a readable zip archive: ${(err as Error).message}`);
  }
  // Errors are taken per readEntry(); one emitted between reads must not crash the process.
  zip.on('error', () => {});
  if (zip.entryCount > SKILL_LIMITS.archiveEntries)
    throw archiveError(
      `the archive has ${zip.entryCount} entries; at most ${SKILL_LIMITS.archiveEntries} are read`,
      'skill.too_many_files',
    );

  const files: SkillFile[] = [];
  const problems: FieldError[] = [];
  const budget = { left: SKILL_LIMITS.totalBytes };
  let declared = 0;
  try {
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      const name = getFileNameLowLevel(
        entry.generalPurposeBitFlag,
        entry.fileName as unknown as Buffer,
        entry.extraFields,
        false,
      );
      const isDir = name.endsWith('/');
      const path = isDir ? name.slice(0, -1) : name;
      const why = skillPathProblem(path) ?? entryProblem(entry, name);
      if (why) {
        problems.push({ field: `files.${name}`, message: why, type: 'skill.path' });
        continue;
      }
      if (isDir) continue;
      // Headers can lie (the inflate count catches that), but an honest oversized archive fails here, unread.
      declared += entry.uncompressedSize;
      if (declared > SKILL_LIMITS.totalBytes) throw tooLarge();
      const mode = (entry.externalFileAttributes >>> 16) & 0o777;
      const content = await inflate(zip, entry, budget);
      // yauzl checks sizes, not checksums: a damaged or tampered entry would be stored as it inflates.
      if (crc32(content) !== entry.crc32)
        throw ValidationError.field(`files.${name}`, 'the entry fails its CRC-32 check', 'skill.archive');
      files.push({
        path,
        content,
        executable: entry.versionMadeBy >> 8 === 3 && (mode & 0o111) !== 0,
      });
    }
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw archiveError(`the zip archive is corrupt: ${(err as Error).message}`);
  }
  // A ZipFile read from a buffer holds no file descriptor: nothing to close.
  if (problems.length > 0) throw new ValidationError(problems);
  return normalizeTree(files);
}
