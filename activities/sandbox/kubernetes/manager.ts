/**
 * Kubernetes backend: a Pod per session (restartPolicy Never, so an idle
 * shutdown leaves a Succeeded pod that the next ensure replaces), a
 * PersistentVolumeClaim for the workspace, a Secret holding the daemon token,
 * skills from ConfigMaps, readiness from the daemon's /health through the
 * pod's readiness probe. The API server is the arbiter between managers:
 * create answers 409 to the loser, and deletes carry the pod's uid as a
 * precondition so a peer's newer pod is never removed.
 *
 * Tested against a real kube-apiserver with etcd and the chart's RBAC, a test
 * standing in for the kubelet (test/integration/sandbox/k8s-real.test.ts), and
 * for the exact request bodies against a local fake (test/fixtures/k8s-fake).
 * Never against a full cluster: no pod has run on a real node in our tests.
 */
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from '@kubernetes/client-node';
import { BaseSandboxManager, type SandboxLogger } from '../base-sandbox-manager.js';
import { SandboxCopyUnsupportedError, SandboxNotReadyError, SandboxStartError } from '../errors.js';
import type { SandboxConfig } from '../sandbox-config.js';
import {
  LABEL,
  sandboxName,
  sessionFromLabels,
  sessionLabels,
  type SandboxHandle,
  type SandboxInfo,
  type SandboxSession,
  type SandboxSpec,
  type WorkspaceCopy,
} from '../sandbox-manager.js';

export interface KubernetesSandboxOptions {
  /** Defaults to the in-cluster config or ~/.kube/config (KubeConfig.loadFromDefault). */
  kubeConfig?: KubeConfig;
  extraLabels?: Record<string, string>;
  pollIntervalMs?: number;
}

const MAX_ROUNDS = 8;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function code(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (code(err) === 404) return undefined;
    throw err;
  }
}

async function ignore(call: Promise<unknown>, ...codes: number[]): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!codes.includes(code(err) ?? 0)) throw err;
  }
}

function isReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    !!pod.status.podIP &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

function finished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export class KubernetesSandboxManager extends BaseSandboxManager {
  readonly backend = 'kubernetes' as const;
  private readonly core: CoreV1Api;
  private readonly namespace: string;
  private readonly extraLabels: Record<string, string>;
  private readonly pollMs: number;

  constructor(
    config: SandboxConfig,
    logger: SandboxLogger,
    tokenSecret: string,
    options: KubernetesSandboxOptions = {},
  ) {
    super(config, logger, tokenSecret);
    const kc =
      options.kubeConfig ??
      (() => {
        const k = new KubeConfig();
        k.loadFromDefault();
        return k;
      })();
    this.core = kc.makeApiClient(CoreV1Api);
    this.namespace = config.k8s.namespace;
    this.extraLabels = options.extraLabels ?? {};
    this.pollMs = options.pollIntervalMs ?? 250;
  }

  private labels(session: SandboxSession): Record<string, string> {
    return { ...sessionLabels(session), [LABEL.installation]: this.config.installation, ...this.extraLabels };
  }

  protected async ensureSandbox(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
  ): Promise<SandboxHandle> {
    const namespace = this.namespace;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const pod = await orUndefined(this.core.readNamespacedPod({ name, namespace }));
      let created = false;
      if (!pod) {
        await this.ensureSecretAndClaim(session, name, token);
        try {
          await this.core.createNamespacedPod({ namespace, body: this.podManifest(session, spec, name) });
          created = true;
          this.logger.info({ sandbox: name, namespace }, 'sandbox pod created');
        } catch (err) {
          if (code(err) === 409) continue; // a peer created it first: adopt it next round
          throw new SandboxStartError(`cannot create sandbox pod ${name}: ${(err as Error).message}`, {
            cause: err,
          });
        }
      } else if (pod.metadata?.deletionTimestamp) {
        await sleep(this.pollMs);
        continue;
      } else if (finished(pod)) {
        // The third life-cycle rule (docs/interface.md#sandbox-life-cycle): the daemon exited (idle shutdown or crash); replace the pod, keep the claim.
        await this.deletePod(name, pod.metadata?.uid);
        continue;
      }
      const handle = await this.waitReady(name, token, created);
      if (handle) return handle;
    }
    throw new SandboxStartError(`sandbox pod ${name} could not be settled after ${MAX_ROUNDS} attempts`);
  }

  private async ensureSecretAndClaim(session: SandboxSession, name: string, token: string): Promise<void> {
    const namespace = this.namespace;
    const metadata = { name, labels: this.labels(session) };
    await ignore(
      this.core.createNamespacedSecret({
        namespace,
        body: { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', stringData: { token } },
      }),
      409,
    );
    const claim: V1PersistentVolumeClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `${name}-workspace`, labels: this.labels(session) },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: this.config.k8s.workspaceSize } },
        ...(this.config.k8s.storageClass ? { storageClassName: this.config.k8s.storageClass } : {}),
      },
    };
    await ignore(this.core.createNamespacedPersistentVolumeClaim({ namespace, body: claim }), 409);
  }

  private podManifest(session: SandboxSession, spec: SandboxSpec, name: string): V1Pod {
    const limits = { ...this.config.limits, ...spec.limits };
    const [uid, gid] = this.config.user.split(':').map((part) => Number(part)) as [number, number];
    const port = this.config.k8s.daemonPort;
    const skills = (spec.skills ?? []).filter((s) => s.configMap);
    const resources = { memory: `${limits.memoryMb}Mi`, cpu: String(limits.cpus) };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: this.labels(session) },
      spec: {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: {
          runAsUser: uid,
          runAsGroup: gid,
          runAsNonRoot: true,
          fsGroup: gid,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: 'sandbox',
            image: spec.image ?? this.config.defaultImage,
            env: [
              { name: 'SANDBOX_TOKEN', valueFrom: { secretKeyRef: { name, key: 'token' } } },
              { name: 'SANDBOX_PORT', value: String(port) },
              { name: 'SANDBOX_ROOT', value: '/sandbox/workspace' },
              { name: 'SANDBOX_IDLE_TIMEOUT_MS', value: String(this.config.idleTimeoutMs) },
              { name: 'SANDBOX_MAX_TIMEOUT_MS', value: String(this.config.maxTimeoutMs) },
              { name: 'SANDBOX_DEFAULT_TIMEOUT_MS', value: String(this.config.commandTimeoutMs) },
              { name: 'SANDBOX_MAX_OUTPUT_BYTES', value: String(this.config.maxOutputBytes) },
            ],
            ports: [{ name: 'daemon', containerPort: port }],
            readinessProbe: { httpGet: { path: '/health', port }, periodSeconds: 1, failureThreshold: 3 },
            // Requests equal limits: the Guaranteed QoS class, so a busy node evicts sandboxes last.
            resources: { limits: resources, requests: resources },
            securityContext: {
              allowPrivilegeEscalation: false,
              privileged: false,
              capabilities: { drop: ['ALL'] },
            },
            volumeMounts: [
              { name: 'workspace', mountPath: '/sandbox/workspace' },
              ...skills.map((s, i) => ({
                name: `skill-${i}`,
                mountPath: `/sandbox/skills/${s.name}`,
                readOnly: true,
              })),
            ],
          },
        ],
        volumes: [
          { name: 'workspace', persistentVolumeClaim: { claimName: `${name}-workspace` } },
          ...skills.map((s, i) => ({ name: `skill-${i}`, configMap: { name: s.configMap ?? '' } })),
        ],
      },
    };
  }

  /** Undefined when the pod vanished or an adopted one finished meanwhile: the caller re-reads. */
  private async waitReady(name: string, token: string, created: boolean): Promise<SandboxHandle | undefined> {
    const deadline = Date.now() + this.config.readyTimeoutMs;
    for (;;) {
      const pod = await orUndefined(this.core.readNamespacedPod({ name, namespace: this.namespace }));
      if (!pod) return undefined;
      if (finished(pod)) {
        if (!created) return undefined;
        const term = pod.status?.containerStatuses?.[0]?.state?.terminated;
        throw new SandboxStartError(
          `sandbox pod ${name} ended during start (${pod.status?.phase}${term ? `, exit ${term.exitCode}: ${term.message ?? term.reason ?? ''}` : ''})`,
        );
      }
      if (isReady(pod)) {
        return {
          name,
          id: pod.metadata?.uid ?? name,
          endpoint: { kind: 'http', url: `http://${pod.status?.podIP}:${this.config.k8s.daemonPort}` },
          token,
          created,
        };
      }
      if (Date.now() > deadline) {
        const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
        throw new SandboxNotReadyError(
          `sandbox pod ${name} did not become ready within ${this.config.readyTimeoutMs} ms (phase ${pod.status?.phase ?? 'unknown'}${waiting?.reason ? `, ${waiting.reason}` : ''})`,
        );
      }
      await sleep(this.pollMs);
    }
  }

  private async deletePod(name: string, uid: string | undefined): Promise<void> {
    // 404: gone already; 409: the uid precondition failed, i.e. a peer already replaced it.
    // The grace period goes in the body: the API server reads DeleteOptions from the body when
    // there is one and then ignores the query's gracePeriodSeconds, so a running pod would stay
    // Terminating for its 30 s default (seen against a real kube-apiserver, not the fake).
    await ignore(
      this.core.deleteNamespacedPod({
        name,
        namespace: this.namespace,
        body: { gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) },
      }),
      404,
      409,
    );
  }

  protected async releaseSandbox(_session: SandboxSession, name: string): Promise<void> {
    await this.deletePod(name, undefined);
  }

  protected async destroySandbox(_session: SandboxSession, name: string): Promise<void> {
    const namespace = this.namespace;
    await this.deletePod(name, undefined);
    await ignore(
      this.core.deleteNamespacedPersistentVolumeClaim({ name: `${name}-workspace`, namespace }),
      404,
    );
    await ignore(this.core.deleteNamespacedSecret({ name, namespace }), 404);
  }

  /**
   * Not built: a claim is copied by a pod mounting both (ReadWriteOnce claims
   * on different nodes cannot), or by a clone (`dataSource`), which only some
   * CSI drivers offer and which stays Pending without telling us why. A fork
   * whose source has a workspace is refused rather than silently started
   * empty; one without a workspace has nothing to copy.
   */
  async copyWorkspace(from: SandboxSession, _to: SandboxSession): Promise<WorkspaceCopy> {
    // A list by name: the chart's Role grants list on claims, not get.
    const { items } = await this.core.listNamespacedPersistentVolumeClaim({
      namespace: this.namespace,
      fieldSelector: `metadata.name=${sandboxName(from)}-workspace`,
    });
    if (!items.some((claim) => !claim.metadata?.deletionTimestamp)) return 'absent';
    throw new SandboxCopyUnsupportedError(
      'the kubernetes sandbox backend cannot copy a workspace: a fork of a conversation whose sandbox has a workspace is not supported there',
    );
  }

  async list(): Promise<SandboxInfo[]> {
    const selector = [
      `${LABEL.sandbox}=1`,
      `${LABEL.installation}=${this.config.installation}`,
      ...Object.entries(this.extraLabels).map(([k, v]) => `${k}=${v}`),
    ].join(',');
    const [pods, claims] = await Promise.all([
      this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: selector }),
      this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector: selector }),
    ]);
    const out = new Map<string, SandboxInfo>();
    for (const pod of pods.items) {
      const session = sessionFromLabels(pod.metadata?.labels);
      const name = pod.metadata?.name;
      if (!session || !name) continue;
      const term = pod.status?.containerStatuses?.[0]?.state?.terminated;
      out.set(name, {
        name,
        session,
        id: pod.metadata?.uid,
        state: finished(pod) ? 'stopped' : 'running',
        image: pod.spec?.containers[0]?.image,
        finishedAt: term?.finishedAt ? new Date(term.finishedAt) : undefined,
        idleMs: undefined, // the daemon is inside the cluster network; the reaper relies on idle shutdown for running pods
      });
    }
    for (const claim of claims.items) {
      // A destroyed sandbox's claim lingers, Terminating, until the PVC-protection controller drops
      // its finalizer (once no pod mounts it): it is gone already, not a stopped sandbox to reap again.
      if (claim.metadata?.deletionTimestamp) continue;
      const session = sessionFromLabels(claim.metadata?.labels);
      const name = claim.metadata?.name?.replace(/-workspace$/, '');
      if (!session || !name || out.has(name)) continue;
      out.set(name, {
        name,
        session,
        id: undefined,
        state: 'absent',
        image: undefined,
        finishedAt: undefined,
        idleMs: undefined,
      });
    }
    return [...out.values()];
  }
}
