import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** What a PEM setting must hold: one or more certificates (a CA bundle, a chain), or one private key. */
export type PemKind = 'certificate' | 'private key';

/** Why a PEM setting was refused; its message follows the variable's name ("TEMPORAL_TLS_CA is not …"). */
export class PemSettingError extends Error {
  override name = 'PemSettingError';
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Inline PEM rather than a path: what every PEM file starts with (or several lines, which no path has). */
export function isInlinePem(value: string): boolean {
  return value.trimStart().startsWith('-----BEGIN ') || value.trim().includes('\n');
}

/**
 * A key or certificate pasted as bare base64 (the PEM without its armour
 * lines). Refused without being echoed: as a "path" it would land in the
 * error message, and it may be a private key.
 */
const BARE_BASE64 = /^[A-Za-z0-9+/=]{64,}$/;

/**
 * A TLS setting holds either the PEM text itself or the path of a file holding
 * it: Kubernetes mounts Secrets as files, while Temporal Cloud and most CI
 * systems hand the PEM out as a value. Read and checked once, at start-up, so
 * a missing file or a key pasted where the certificate belongs stops the
 * process naming the variable rather than failing at the first connection.
 */
export function resolvePem(value: string, kind: PemKind): Buffer {
  if (BARE_BASE64.test(value.trim()))
    throw new PemSettingError(
      'looks like base64 without its -----BEGIN/-----END lines: give the whole PEM, or the path of a PEM file',
    );
  const inline = isInlinePem(value);
  // .env files and `docker run -e` cannot hold newlines: accept them escaped as \n.
  const text = inline ? value.trim().replace(/\\n/g, '\n') : readPemFile(value.trim());
  const where = inline ? 'inline value' : value.trim();
  checkPem(text, kind, where);
  return Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
}

function readPemFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new PemSettingError(`names a file that does not exist (${file})`);
    if (code === 'EISDIR') throw new PemSettingError(`names a directory, not a PEM file (${file})`);
    throw new PemSettingError(
      `names a file that cannot be read (${file}: ${code ?? (err as Error).message})`,
    );
  }
}

function checkPem(text: string, kind: PemKind, where: string): void {
  const blocks = [...text.matchAll(BLOCK)].map((m) => ({ label: m[1]!, pem: m[0] }));
  const refuse = (why: string) => new PemSettingError(`is not a PEM ${kind} (${where}: ${why})`);
  if (kind === 'certificate') {
    const certs = blocks.filter((b) => b.label === 'CERTIFICATE');
    if (certs.length === 0) {
      const found = blocks[0]?.label;
      throw refuse(found ? `found ${found}, expected CERTIFICATE` : 'no -----BEGIN CERTIFICATE----- block');
    }
    for (const cert of certs) {
      try {
        new X509Certificate(cert.pem);
      } catch (err) {
        throw refuse(`a certificate does not parse: ${(err as Error).message}`);
      }
    }
    return;
  }
  const key = blocks.find((b) => b.label.endsWith('PRIVATE KEY'));
  if (!key) {
    const found = blocks[0]?.label;
    throw refuse(found ? `found ${found}, expected a PRIVATE KEY` : 'no -----BEGIN PRIVATE KEY----- block');
  }
  if (key.label === 'ENCRYPTED PRIVATE KEY')
    throw refuse('the key is encrypted; give it without a passphrase (keep it in a Secret instead)');
  try {
    createPrivateKey(key.pem);
  } catch (err) {
    // The driver's message names the format problem, never the key's bytes.
    throw refuse(`the key does not parse: ${(err as Error).message}`);
  }
}

/**
 * Whether a client certificate and key belong together: a mismatch otherwise
 * surfaces only as a handshake failure with an unhelpful message.
 */
export function certificateMatchesKey(cert: Buffer, key: Buffer): boolean {
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}
