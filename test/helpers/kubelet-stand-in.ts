/**
 * Plays the scheduler's and the kubelet's part for the sandbox pods of one
 * namespace on a real API server that has neither (test/helpers/kube-apiserver.ts).
 * Each pod is bound to a stand-in Node and its first container "runs" as a
 * local sandbox-daemon process: the environment resolved as the kubelet
 * resolves it (values, secretKeyRef from the pod's Secret), the
 * PersistentVolumeClaim mounted at SANDBOX_ROOT replaced by a host folder per
 * claim (so a workspace outlives its pod, as a volume does), and its own
 * loopback address as pod IP (127.0.1.x: pods on one port never collide).
 * Status goes through the pods/status subresource as the kubelet writes it:
 * Running when started, Ready once the readiness probe's GET /health answers,
 * Succeeded/Failed with the exit code when the daemon exits (idle shutdown).
 * A deleted pod's daemon is stopped; a gracefully deleted one (Terminating) is
 * then removed, as the kubelet confirms a deletion.
 *
 * What this does not do: pull images, enforce resources or security
 * contexts, mount ConfigMaps, or isolate anything. Pods never really run here.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  ApiException,
  CoreV1Api,
  type KubeConfig,
  type V1Pod,
  type V1PodStatus,
} from '@kubernetes/client-node';
import { spawnTied, stopTied, type TiedChild } from '../../scripts/lib/children.js';

const DAEMON_ENTRY = path.resolve(import.meta.dirname, '../../sandbox-daemon/dist/daemon.mjs');

interface Running {
  name: string;
  ip: string;
  port: number;
  child: TiedChild;
  ready: boolean;
  startedAt: Date;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const apiCode = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export class KubeletStandIn {
  readonly nodeName = 'stand-in-node';
  /** When set, new pods stay Pending with this waiting reason (e.g. ImagePullBackOff), as a node that cannot start them. */
  holdReason: string | undefined;
  private readonly core: CoreV1Api;
  private readonly running = new Map<string, Running>(); // by pod uid
  private nextIp = 0;
  private loop: Promise<void> | undefined;
  private stopped = false;

  /** `admin` must be allowed to bind pods and write pod status (the kubelet's and scheduler's rights). */
  constructor(
    admin: KubeConfig,
    private readonly namespace: string,
    private readonly volumesDir: string,
  ) {
    this.core = admin.makeApiClient(CoreV1Api);
  }

  async start(): Promise<void> {
    await this.core
      .createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: this.nodeName } } })
      .catch((err: unknown) => {
        if (apiCode(err) !== 409) throw err;
      });
    this.loop = (async () => {
      while (!this.stopped) {
        await this.tick().catch((err: unknown) => console.warn('kubelet stand-in:', err));
        await sleep(50);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all([...this.running.values()].map((r) => stopTied(r.child, 'SIGKILL')));
    this.running.clear();
  }

  /** Kills a pod's daemon as a crash would (exit 137, phase Failed). */
  crash(podName: string): void {
    for (const r of this.running.values()) if (r.name === podName) r.child.child.kill('SIGKILL');
  }

  private async tick(): Promise<void> {
    const pods = (await this.core.listNamespacedPod({ namespace: this.namespace })).items;
    const live = new Set(pods.map((p) => p.metadata?.uid));
    for (const [uid, r] of this.running) {
      // Deleted (grace 0 removes it at once): the kubelet kills what it ran.
      if (!live.has(uid)) {
        this.running.delete(uid);
        await stopTied(r.child, 'SIGTERM', 2000);
      }
    }
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? '';
      if (pod.metadata?.deletionTimestamp) {
        await this.finishDeletion(pod);
        continue;
      }
      if (!pod.spec?.nodeName) await this.bind(pod);
      const r = this.running.get(uid);
      if (r && !r.ready && (await this.probe(r))) {
        r.ready = true;
        await this.setStatus(pod, (s) => runningStatus(s, r, true));
      }
      if (r || (pod.status?.phase && pod.status.phase !== 'Pending')) continue;
      if (this.holdReason) await this.setStatus(pod, (s) => waitingStatus(s, this.holdReason ?? ''));
      else await this.startPod(pod);
    }
  }

  /**
   * A graceful delete leaves a bound pod Terminating until its kubelet has
   * stopped the containers and removes the object (grace 0, same uid).
   */
  private async finishDeletion(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const r = this.running.get(uid);
    this.running.delete(uid);
    if (r) await stopTied(r.child, 'SIGTERM', Number(pod.metadata?.deletionGracePeriodSeconds ?? 30) * 1000);
    await this.core
      .deleteNamespacedPod({
        name: pod.metadata?.name ?? '',
        namespace: this.namespace,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      })
      .catch((err: unknown) => {
        if (apiCode(err) !== 404 && apiCode(err) !== 409) throw err;
      });
  }

  private async bind(pod: V1Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    await this.core
      .createNamespacedPodBinding({
        name,
        namespace: this.namespace,
        body: { metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName } },
      })
      .catch((err: unknown) => {
        if (apiCode(err) !== 409 && apiCode(err) !== 404) throw err; // bound already, or deleted
      });
  }

  /** The container's environment as the kubelet builds it; undefined while a referenced Secret is missing. */
  private async resolveEnv(pod: V1Pod): Promise<Record<string, string> | undefined> {
    const env: Record<string, string> = {};
    for (const e of pod.spec?.containers[0]?.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (!ref) {
        env[e.name] = e.value ?? '';
        continue;
      }
      const secret = await this.core
        .readNamespacedSecret({ name: ref.name ?? '', namespace: this.namespace })
        .catch(() => undefined);
      const value = secret?.data?.[ref.key];
      if (value === undefined) return undefined;
      env[e.name] = Buffer.from(value, 'base64').toString('utf8');
    }
    return env;
  }

  /** Rewrites paths under a claim's mountPath to that claim's host folder. */
  private mapVolumes(pod: V1Pod, env: Record<string, string>): void {
    const container = pod.spec?.containers[0];
    for (const mount of container?.volumeMounts ?? []) {
      const claim = pod.spec?.volumes?.find((v) => v.name === mount.name)?.persistentVolumeClaim;
      if (!claim) continue;
      const hostDir = path.join(this.volumesDir, claim.claimName);
      mkdirSync(hostDir, { recursive: true });
      for (const [k, v] of Object.entries(env))
        if (v === mount.mountPath || v.startsWith(`${mount.mountPath}/`))
          env[k] = hostDir + v.slice(mount.mountPath.length);
    }
  }

  private async startPod(pod: V1Pod): Promise<void> {
    const env = await this.resolveEnv(pod);
    if (!env) {
      await this.setStatus(pod, (s) => waitingStatus(s, 'CreateContainerConfigError'));
      return;
    }
    this.mapVolumes(pod, env);
    const n = this.nextIp++;
    const ip = `127.0.${1 + Math.floor(n / 250)}.${2 + (n % 250)}`;
    const port = Number(env.SANDBOX_PORT ?? 8080);
    const child = spawnTied(process.execPath, [DAEMON_ENTRY], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', ...env, SANDBOX_HOST: ip },
      stdio: 'ignore',
    });
    const r: Running = {
      name: pod.metadata?.name ?? '',
      ip,
      port,
      child,
      ready: false,
      startedAt: new Date(),
    };
    this.running.set(pod.metadata?.uid ?? '', r);
    await this.setStatus(pod, (s) => runningStatus(s, r, false));
    void child.exited.then(async ({ code, signal }) => {
      if (this.running.get(pod.metadata?.uid ?? '') !== r) return; // deleted: nothing to report
      this.running.delete(pod.metadata?.uid ?? '');
      const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
      await this.setStatus(pod, (s) => terminatedStatus(s, r, exitCode)).catch(() => undefined);
    });
  }

  private async probe(r: Running): Promise<boolean> {
    const res = await fetch(`http://${r.ip}:${r.port}/health`, { signal: AbortSignal.timeout(1000) }).catch(
      () => undefined,
    );
    return res?.ok ?? false;
  }

  /** Read-modify-write of pods/status, retried on conflicts; a pod deleted or replaced meanwhile is left alone. */
  private async setStatus(pod: V1Pod, change: (status: V1PodStatus) => V1PodStatus): Promise<void> {
    const name = pod.metadata?.name ?? '';
    for (let attempt = 0; attempt < 10; attempt++) {
      const current = await this.core
        .readNamespacedPod({ name, namespace: this.namespace })
        .catch(() => undefined);
      if (!current || current.metadata?.uid !== pod.metadata?.uid) return;
      current.status = change(current.status ?? {});
      try {
        await this.core.replaceNamespacedPodStatus({ name, namespace: this.namespace, body: current });
        return;
      } catch (err) {
        if (apiCode(err) === 404) return;
        if (apiCode(err) !== 409) throw err;
      }
    }
  }
}

const condition = (type: string, ok: boolean) => ({
  type,
  status: ok ? 'True' : 'False',
  lastTransitionTime: new Date(),
});

function waitingStatus(status: V1PodStatus, reason: string): V1PodStatus {
  return {
    ...status,
    phase: 'Pending',
    conditions: [condition('PodScheduled', true), condition('Ready', false)],
    containerStatuses: [
      {
        name: 'sandbox',
        image: '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason } },
      },
    ],
  };
}

function runningStatus(status: V1PodStatus, r: Running, ready: boolean): V1PodStatus {
  return {
    ...status,
    phase: 'Running',
    hostIP: '127.0.0.1',
    podIP: r.ip,
    podIPs: [{ ip: r.ip }],
    startTime: r.startedAt,
    conditions: [
      condition('PodScheduled', true),
      condition('Initialized', true),
      condition('ContainersReady', ready),
      condition('Ready', ready),
    ],
    containerStatuses: [
      {
        name: 'sandbox',
        image: '',
        imageID: '',
        ready,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: r.startedAt } },
      },
    ],
  };
}

function terminatedStatus(status: V1PodStatus, r: Running, exitCode: number): V1PodStatus {
  const base = runningStatus(status, r, false);
  return {
    ...base,
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [
      {
        name: 'sandbox',
        image: '',
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode,
            reason: exitCode === 0 ? 'Completed' : 'Error',
            startedAt: r.startedAt,
            finishedAt: new Date(),
          },
        },
      },
    ],
  };
}
