import yazl from 'yazl';

export interface ZipEntry {
  path: string;
  content?: string | Buffer;
  /** Unix mode including the file type (default a regular 0644 file). */
  mode?: number;
  compress?: boolean;
  directory?: boolean;
}

/** A zip made by a real archiver (yazl), for upload tests. */
export function zipOf(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.directory) zip.addEmptyDirectory(e.path);
    else
      zip.addBuffer(Buffer.from(e.content ?? ''), e.path, {
        mode: e.mode ?? 0o100644,
        compress: e.compress ?? true,
      });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/**
 * Replaces every occurrence of `from` with `to` (same byte length): how tests
 * forge entries a well-behaved archiver refuses to write ("../x", "/x").
 */
export function patchName(zip: Buffer, from: string, to: string): Buffer {
  const a = Buffer.from(from);
  const b = Buffer.from(to);
  if (a.length !== b.length) throw new Error('patchName needs names of the same length');
  const out = Buffer.from(zip);
  let found = 0;
  for (let i = out.indexOf(a); i >= 0; i = out.indexOf(a, i + 1)) {
    b.copy(out, i);
    found++;
  }
  if (found === 0) throw new Error(`${from} not found in the zip`);
  return out;
}

/** Makes the central-directory record of `name` claim `size` uncompressed bytes: a zip bomb that lies. */
export function lieAboutSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  for (let i = 0; i + 46 <= out.length; i++) {
    if (out.readUInt32LE(i) !== 0x02014b50) continue;
    const nameLength = out.readUInt16LE(i + 28);
    if (out.toString('utf8', i + 46, i + 46 + nameLength) === name) {
      out.writeUInt32LE(size, i + 24);
      return out;
    }
  }
  throw new Error(`no central-directory record for ${name}`);
}
