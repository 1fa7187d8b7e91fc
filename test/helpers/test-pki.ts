import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A certificate and its key, as files (what the settings name) and as PEM text. */
export interface Issued {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

/**
 * A throwaway PKI made with the `openssl` command, as an operator would make
 * one: a CA, server certificates it signed (one for the names the tests
 * connect with, one for another name), a client certificate it signed, and a
 * second, unrelated CA with its own client certificate. P-256 keys: quick to
 * make, and what rustls (the worker's TLS) and Node both accept.
 */
export interface TestPki {
  dir: string;
  ca: Issued;
  /** SAN: DNS tls-proxy.test, IP 127.0.0.1. */
  server: Issued;
  /** SAN: DNS elsewhere.test only: the chain verifies, the name does not. */
  misnamedServer: Issued;
  client: Issued;
  otherCa: Issued;
  /** Signed by otherCa: a well-formed certificate the servers must still refuse. */
  strangerClient: Issued;
  remove(): void;
}

export const SERVER_NAME = 'tls-proxy.test';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function read(dir: string, name: string): Issued {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

function makeCa(dir: string, name: string): Issued {
  openssl(dir, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc',
    '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
  return read(dir, name);
}

function issue(dir: string, ca: string, name: string, extensions: string[]): Issued {
  writeFileSync(path.join(dir, `${name}.ext`), `${extensions.join('\n')}\n`);
  openssl(dir, [
    'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc',
    '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`,
  ]); // prettier-ignore
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`,
    '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`,
  ]); // prettier-ignore
  return read(dir, name);
}

const leaf = ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature'];

export function createTestPki(): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-test-pki-'));
  const ca = makeCa(dir, 'test-ca');
  const otherCa = makeCa(dir, 'other-ca');
  const serverExt = (san: string) => [...leaf, 'extendedKeyUsage=serverAuth', `subjectAltName=${san}`];
  const clientExt = [...leaf, 'extendedKeyUsage=clientAuth'];
  return {
    dir,
    ca,
    server: issue(dir, 'test-ca', 'server', serverExt(`DNS:${SERVER_NAME},IP:127.0.0.1`)),
    misnamedServer: issue(dir, 'test-ca', 'misnamed-server', serverExt('DNS:elsewhere.test')),
    client: issue(dir, 'test-ca', 'client', clientExt),
    otherCa,
    strangerClient: issue(dir, 'other-ca', 'stranger-client', clientExt),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
