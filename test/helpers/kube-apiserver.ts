/**
 * A real Kubernetes API server for tests, envtest-style: etcd and
 * kube-apiserver (built by scripts/install-kube-apiserver) on loopback, random
 * ports, a throwaway data dir. Real authentication (a static token file),
 * real RBAC, real validation and admission; no controller-manager, scheduler
 * or kubelet, so nothing runs and nothing reconciles: tests play those parts.
 *
 * Both processes are tied to the test process (scripts/lib/children.ts): they
 * are killed with it, even when it is itself killed.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { spawnTied, stopTied, type TiedChild } from '../../scripts/lib/children.js';
import { freePort } from './ports.js';

export interface KubeBinaries {
  kubeApiserver: string;
  etcd: string;
}

/** Where scripts/install-kube-apiserver puts them; overridden by KUBE_APISERVER_PATH / ETCD_PATH. */
export function findKubeBinaries(env: NodeJS.ProcessEnv = process.env): KubeBinaries | undefined {
  const cache =
    env.AGENT_SERVER_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'agent-server');
  const kubeApiserver = env.KUBE_APISERVER_PATH ?? path.join(cache, 'kube-apiserver-v1.37.2/kube-apiserver');
  const etcd = env.ETCD_PATH ?? path.join(cache, 'etcd-v3.7.3/etcd');
  return existsSync(kubeApiserver) && existsSync(etcd) ? { kubeApiserver, etcd } : undefined;
}

/**
 * The binaries, or undefined after a loud warning on a laptop without them;
 * under CI=true their absence is an error: CI must never pass by skipping.
 */
export function kubeBinariesOrSkip(suite: string): KubeBinaries | undefined {
  const found = findKubeBinaries();
  if (found) return found;
  const reason =
    'kube-apiserver/etcd not found (KUBE_APISERVER_PATH, ETCD_PATH, or ~/.cache/agent-server): run scripts/install-kube-apiserver';
  if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true ${suite} may not skip`);
  console.warn(`\n*** SKIPPING ${suite}: ${reason} ***\n`);
  return undefined;
}

/** A static-token user: the token file's "token,user,uid,groups" line. */
export interface TokenUser {
  token: string;
  user: string;
  groups: string[];
}

/** The user a ServiceAccount's own token authenticates as (what RBAC subjects of kind ServiceAccount match). */
export function serviceAccountUser(namespace: string, name: string, token: string): TokenUser {
  return {
    token,
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

export interface ApiResponse {
  status: number;
  body: unknown;
}

export interface KubeApiServer {
  /** https://127.0.0.1:<port> */
  server: string;
  /** PEM of the self-signed serving certificate, the clients' only trust anchor. */
  ca: string;
  /** Bearer tokens by user key: `admin` (system:masters) and those passed in. */
  tokens: Record<string, string>;
  /** A client-node KubeConfig authenticated as the named token user. */
  kubeConfig(user: string, namespace?: string): KubeConfig;
  /** A raw HTTPS request as the named token user; the body is parsed when JSON. */
  fetch(user: string, method: string, apiPath: string, body?: unknown): Promise<ApiResponse>;
  /** The same with any bearer token (e.g. one issued by TokenRequest). */
  fetchWithToken(token: string, method: string, apiPath: string, body?: unknown): Promise<ApiResponse>;
  stop(): Promise<void>;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The serving certificate (self-signed, for 127.0.0.1) and the ServiceAccount token signing pair. */
function makeKeys(dir: string): void {
  openssl(dir, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-noenc',
    '-keyout', 'serving.key', '-out', 'serving.crt', '-days', '2', '-subj', '/CN=kube-apiserver',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]); // prettier-ignore
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

function httpsJson(
  url: string,
  ca: string,
  token: string,
  method: string,
  body?: unknown,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        ca,
        timeout: 10_000,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON (e.g. /readyz answers plain text)
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function waitUntil(what: string, child: TiedChild, log: string, check: () => Promise<boolean>) {
  const deadline = Date.now() + 60_000;
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    if (await check().catch(() => false)) return;
    if (exited || Date.now() > deadline) {
      const tail = (await readFile(log, 'utf8').catch(() => '')).split('\n').slice(-30).join('\n');
      throw new Error(`${what} ${exited ? 'exited' : 'not ready after 60 s'}; last log lines:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startKubeApiServer(
  binaries: KubeBinaries,
  users: Record<string, TokenUser> = {},
): Promise<KubeApiServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kube-apiserver-'));
  const children: TiedChild[] = [];
  const fds: number[] = [];
  // The child gets its own copy of the descriptor: ours is closed on stop.
  const logFd = (file: string) => {
    const fd = openSync(file, 'a');
    fds.push(fd);
    return fd;
  };
  const stop = async () => {
    // SIGKILL, here and when this process dies: the store is thrown away, and kube-apiserver's
    // graceful shutdown on SIGTERM waits for an etcd that may already be gone.
    for (const child of children.reverse()) await stopTied(child, 'SIGKILL');
    for (const fd of fds.splice(0)) closeSync(fd);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    makeKeys(dir);
    const all: Record<string, TokenUser> = {
      admin: { token: `admin-${crypto.randomUUID()}`, user: 'test-admin', groups: ['system:masters'] },
      ...users,
    };
    await writeFile(
      path.join(dir, 'tokens.csv'),
      Object.values(all)
        .map((u, i) => `${u.token},${u.user},uid-${i},"${u.groups.join(',')}"`)
        .join('\n') + '\n',
      { mode: 0o600 },
    );

    const [client, peer, secure] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${client}`;
    const etcdLog = path.join(dir, 'etcd.log');
    const etcd = spawnTied(
      binaries.etcd,
      [
        '--name=test',
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=test=http://127.0.0.1:${peer}`,
        '--log-level=warn',
        // A throwaway store on a shared 2-core machine: durability buys nothing here.
        '--unsafe-no-fsync',
      ],
      { stdio: ['ignore', logFd(etcdLog), logFd(etcdLog)], stopSignal: 'SIGKILL' },
    );
    children.push(etcd);
    await waitUntil('etcd', etcd, etcdLog, async () => {
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    });

    const apiLog = path.join(dir, 'kube-apiserver.log');
    const apiserver = spawnTied(
      binaries.kubeApiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${secure}`,
        `--cert-dir=${path.join(dir, 'certs')}`,
        `--tls-cert-file=${path.join(dir, 'serving.crt')}`,
        `--tls-private-key-file=${path.join(dir, 'serving.key')}`,
        `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        // The addresses are only written into Service objects: nothing routes to them here.
        '--service-cluster-ip-range=10.96.0.0/24',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
        // No other apiserver and no real Endpoints to keep: the default reconciler would
        // write this machine's address into the kubernetes Service's endpoints.
        '--endpoint-reconciler-type=none',
        '--profiling=false',
        '-v=0',
      ],
      { stdio: ['ignore', logFd(apiLog), logFd(apiLog)], stopSignal: 'SIGKILL' },
    );
    children.push(apiserver);
    const server = `https://127.0.0.1:${secure}`;
    const ca = await readFile(path.join(dir, 'serving.crt'), 'utf8');
    const tokens = Object.fromEntries(Object.entries(all).map(([k, u]) => [k, u.token]));
    const tokenOf = (user: string) => {
      const token = tokens[user];
      if (!token) throw new Error(`no token user "${user}" (known: ${Object.keys(tokens).join(', ')})`);
      return token;
    };
    // /readyz includes the post-start hooks: RBAC's bootstrap roles, the system namespaces, priority classes.
    await waitUntil('kube-apiserver', apiserver, apiLog, async () => {
      const res = await httpsJson(`${server}/readyz`, ca, tokenOf('admin'), 'GET');
      return res.status === 200;
    });

    return {
      server,
      ca,
      tokens,
      kubeConfig(user: string, namespace = 'default') {
        const kc = new KubeConfig();
        kc.loadFromOptions({
          clusters: [{ name: 'test', server, caData: Buffer.from(ca).toString('base64') }],
          users: [{ name: user, token: tokenOf(user) }],
          contexts: [{ name: 'test', cluster: 'test', user, namespace }],
          currentContext: 'test',
        });
        return kc;
      },
      fetchWithToken: (token, method, apiPath, body) =>
        httpsJson(`${server}${apiPath}`, ca, token, method, body),
      fetch: (user, method, apiPath, body) =>
        httpsJson(`${server}${apiPath}`, ca, tokenOf(user), method, body),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
