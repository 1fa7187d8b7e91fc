/**
 * Set-up of the Kubernetes sandbox tests against a real kube-apiserver: the
 * chart's sandbox objects (Namespace, the worker's ServiceAccount, the Role
 * and RoleBinding, the NetworkPolicy) applied with an admin token; the
 * manager configured from the SANDBOX_* values the chart gives the worker
 * and authenticated as that ServiceAccount, so RBAC allows it exactly what
 * the Role grants; a kubelet stand-in running each pod as a local daemon.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubernetesSandboxManager } from '../../../activities/sandbox/kubernetes/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { findHelm, renderChart, type K8sObject } from '../../helpers/helm.js';
import {
  kubeBinariesOrSkip,
  serviceAccountUser,
  startKubeApiServer,
  type KubeApiServer,
} from '../../helpers/kube-apiserver.js';
import { KubeObjects } from '../../helpers/kube-objects.js';
import { KubeletStandIn } from '../../helpers/kubelet-stand-in.js';
import { freePort } from '../../helpers/ports.js';
import { repoRoot, silentLogger, TEST_SECRET } from './docker-harness.js';

export const RELEASE_NS = 'agents';
const SUITE = 'the Kubernetes sandbox tests against a real kube-apiserver';

/** The binaries and helm, or undefined (after a loud warning) on a laptop without them; CI=true never skips. */
export function prerequisites(): { helm: string } | undefined {
  const binaries = kubeBinariesOrSkip(SUITE);
  const helm = findHelm();
  if (!helm) {
    const reason =
      'helm not found (HELM_PATH, or ~/.cache/agent-server/helm-*/helm): run scripts/install-helm';
    if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true ${SUITE} may not skip`);
    console.warn(`\n*** SKIPPING ${SUITE}: ${reason} ***\n`);
  }
  return binaries && helm ? { helm } : undefined;
}

type Env = { name: string; value?: string };
const workerEnv = (objs: K8sObject[]): Record<string, string> => {
  const worker = objs.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-worker'));
  const containers = (worker?.spec as { template: { spec: { containers: Array<{ env?: Env[] }> } } }).template
    .spec.containers;
  return Object.fromEntries(
    (containers[0]?.env ?? []).flatMap((e) =>
      e.name.startsWith('SANDBOX_') && e.value ? [[e.name, e.value]] : [],
    ),
  );
};

export interface RealCluster {
  api: KubeApiServer;
  kubelet: KubeletStandIn;
  /** The chart's sandbox namespace. */
  namespace: string;
  /** The worker's ServiceAccount, bound to the chart's Role. */
  serviceAccount: string;
  /** The SANDBOX_* environment the chart gives the worker, plus the test's daemon port. */
  env: Record<string, string>;
  /** A manager as the worker runs it: the chart's settings, the ServiceAccount's token. */
  manager(env?: Record<string, string>): KubernetesSandboxManager;
  stop(): Promise<void>;
}

export async function startRealCluster(helm: string): Promise<RealCluster> {
  // The daemon the stand-in runs; the same bundle the sandbox image ships.
  execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
  const objs = await renderChart(helm, { valuesFiles: ['ci/production-values.yaml'], namespace: RELEASE_NS });
  const sandboxObjs = objs.filter(
    (o) =>
      o.metadata.labels?.['app.kubernetes.io/component'] === 'sandbox' ||
      (o.kind === 'ServiceAccount' && o.metadata.name.endsWith('-worker')),
  );
  const role = sandboxObjs.find((o) => o.kind === 'Role');
  const sa = sandboxObjs.find((o) => o.kind === 'ServiceAccount');
  if (!role?.metadata.namespace || !sa)
    throw new Error('the chart rendered no sandbox Role or worker ServiceAccount');
  const namespace = role.metadata.namespace;

  const binaries = kubeBinariesOrSkip(SUITE);
  if (!binaries) throw new Error('unreachable: prerequisites() checked the binaries');
  const api = await startKubeApiServer(binaries, {
    manager: serviceAccountUser(RELEASE_NS, sa.metadata.name, randomBytes(24).toString('hex')),
  });
  const volumes = await mkdtemp(path.join(os.tmpdir(), 'k8s-volumes-'));
  const kubelet = new KubeletStandIn(api.kubeConfig('admin'), namespace, volumes);
  try {
    const kube = new KubeObjects(api);
    await kube.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NS } }], RELEASE_NS);
    await kube.apply(sandboxObjs, RELEASE_NS);
    // The controller-manager's part: it gives every namespace a `default` ServiceAccount, without
    // which ServiceAccount admission refuses every pod that names none (the manager's pods).
    await kube.apply(
      [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } }],
      namespace,
    );
    await kubelet.start();
  } catch (err) {
    await api.stop();
    throw err;
  }
  // Pods share one daemon port, each on its own loopback address; a free one avoids this machine's 8080.
  const env = { ...workerEnv(objs), SANDBOX_K8S_DAEMON_PORT: String(await freePort()) };
  return {
    api,
    kubelet,
    namespace,
    serviceAccount: sa.metadata.name,
    env,
    manager: (extra = {}) =>
      new KubernetesSandboxManager(
        loadSandboxConfig({ ...env, SANDBOX_READY_TIMEOUT_MS: '15000', ...extra }),
        silentLogger,
        TEST_SECRET,
        { kubeConfig: api.kubeConfig('manager', namespace), pollIntervalMs: 50 },
      ),
    async stop() {
      await kubelet.stop();
      await api.stop();
      await rm(volumes, { recursive: true, force: true });
    },
  };
}
