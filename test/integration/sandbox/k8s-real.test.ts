/**
 * The Kubernetes sandbox backend against a real kube-apiserver with etcd
 * (test/helpers/kube-apiserver.ts): the chart's own Namespace, ServiceAccount,
 * Role and RoleBinding applied, the manager authenticated as that
 * ServiceAccount under RBAC, real validation and admission (ServiceAccount,
 * PodSecurity restricted, PVC protection). There is no kubelet: a stand-in
 * (test/helpers/kubelet-stand-in.ts) binds each pod, runs its daemon as a
 * local process on the pod's own loopback address and writes pod status, so
 * commands really go manager → pod IP → daemon. What this cannot show: images
 * pulled, containers isolated, resources enforced, volumes provisioned.
 */
import { CoreV1Api, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxCopyUnsupportedError, SandboxNotReadyError } from '../../../activities/sandbox/errors.js';
import { sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
import { SandboxReaper } from '../../../activities/sandbox/sandbox-reaper.js';
import { newSession, silentLogger, waitFor } from './docker-harness.js';
import { prerequisites, RELEASE_NS, startRealCluster, type RealCluster } from './k8s-real-harness.js';

const ready = prerequisites();

describe.skipIf(!ready)('kubernetes sandbox against a real kube-apiserver (the chart’s RBAC)', () => {
  let cluster: RealCluster;
  let admin: CoreV1Api;
  let ns: string;
  const pod = (name: string) => admin.readNamespacedPod({ name, namespace: ns });
  const podOrGone = (name: string) => pod(name).catch(() => undefined);
  const claim = (name: string) =>
    admin.readNamespacedPersistentVolumeClaim({ name: `${name}-workspace`, namespace: ns });

  beforeAll(async () => {
    cluster = await startRealCluster(ready?.helm ?? '');
    admin = cluster.api.kubeConfig('admin').makeApiClient(CoreV1Api);
    ns = cluster.namespace;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('the manager is the chart’s ServiceAccount and may do only what its Role allows', async () => {
    // A real token of that ServiceAccount (TokenRequest, signed by the server's key) is the same
    // user as the static token the manager uses, so the Role's binding is what applies to both.
    const issued = await admin.createNamespacedServiceAccountToken({
      name: cluster.serviceAccount,
      namespace: RELEASE_NS,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const whoami = async (token: string) => {
      const res = await cluster.api.fetchWithToken(
        token,
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        },
      );
      return (res.body as { status: { userInfo: { username: string } } }).status.userInfo.username;
    };
    const user = `system:serviceaccount:${RELEASE_NS}:${cluster.serviceAccount}`;
    expect(await whoami(issued.status?.token ?? '')).toBe(user);
    expect(await whoami(cluster.api.tokens.manager ?? '')).toBe(user);

    const as = (method: string, apiPath: string, body?: unknown) =>
      cluster.api.fetch('manager', method, apiPath, body).then((r) => r.status);
    const session = newSession();
    const { name } = await cluster.manager().ensure(session);
    // Allowed by the Role: the calls the manager makes (it just made them).
    expect(await as('GET', `/api/v1/namespaces/${ns}/pods/${name}`)).toBe(200);
    // Refused: reading back the daemon token, changing a pod, exec into it, anything elsewhere.
    expect(await as('GET', `/api/v1/namespaces/${ns}/secrets/${name}`)).toBe(403);
    expect(await as('GET', `/api/v1/namespaces/${ns}/secrets`)).toBe(403);
    expect(await as('PATCH', `/api/v1/namespaces/${ns}/pods/${name}`, {})).toBe(403);
    expect(await as('POST', `/api/v1/namespaces/${ns}/pods/${name}/exec`)).toBe(403);
    expect(await as('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}-workspace`)).toBe(403);
    expect(await as('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } })).toBe(403);
    expect(await as('GET', `/api/v1/namespaces/${RELEASE_NS}/pods`)).toBe(403);
    expect(await as('GET', '/api/v1/pods')).toBe(403);
    expect(await as('DELETE', `/api/v1/namespaces/${ns}`)).toBe(403);
    await cluster.manager().destroy(session);
  });

  it('creates a secret, a claim and a pod the server admits (restricted Pod Security), runs commands, then reuses it', async () => {
    const manager = cluster.manager();
    const session = newSession();
    const handle = await manager.ensure(session, { skills: [{ name: 'csv', configMap: 'skill-csv' }] });
    const name = sandboxName(session);
    expect(handle).toMatchObject({ name, created: true });
    expect(handle.endpoint).toEqual({
      kind: 'http',
      url: `http://${(await pod(name)).status?.podIP}:${cluster.env.SANDBOX_K8S_DAEMON_PORT}`,
    });
    // Through the pod IP to the daemon the stand-in started with the pod's own environment.
    const r = await manager.exec(session, { command: 'echo hello > f.txt; cat f.txt' });
    expect(r.stdout).toBe('hello\n');

    const stored: V1Pod = await pod(name);
    expect(stored.metadata?.labels).toMatchObject({
      'agent-server.conversation-id': session.conversationId,
      'agent-server.sandbox': '1',
      'agent-server.installation': cluster.env.SANDBOX_INSTALLATION,
    });
    // Admitted under the restricted level the chart's namespace enforces.
    const namespace = await admin.readNamespace({ name: ns });
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(stored.spec?.serviceAccountName).toBe('default'); // defaulted by the server
    expect(stored.spec?.automountServiceAccountToken).toBe(false);
    expect(stored.spec?.restartPolicy).toBe('Never');
    expect(stored.spec?.nodeName).toBe(cluster.kubelet.nodeName);
    expect(stored.spec?.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    const container = stored.spec?.containers[0];
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.readinessProbe?.httpGet).toMatchObject({
      path: '/health',
      port: Number(cluster.env.SANDBOX_K8S_DAEMON_PORT),
    });
    expect(container?.volumeMounts).toContainEqual({
      name: 'skill-0',
      mountPath: '/sandbox/skills/csv',
      readOnly: true,
    });
    expect(container?.env).toContainEqual({
      name: 'SANDBOX_TOKEN',
      valueFrom: { secretKeyRef: { name, key: 'token' } },
    });
    // Quantities come back canonical: what a cluster shows in `kubectl get -o yaml`.
    expect(container?.resources?.limits).toEqual({ memory: '512Mi', cpu: '1' });
    expect(container?.image).toBe(cluster.env.SANDBOX_DEFAULT_IMAGE);
    expect(JSON.stringify(stored)).not.toContain(handle.token); // the token lives in the Secret only
    const secret = await admin.readNamespacedSecret({ name, namespace: ns });
    expect(secret.data).toEqual({ token: Buffer.from(handle.token).toString('base64') });
    const pvc: V1PersistentVolumeClaim = await claim(name);
    expect(pvc.spec).toMatchObject({
      storageClassName: cluster.env.SANDBOX_K8S_STORAGE_CLASS,
      resources: { requests: { storage: cluster.env.SANDBOX_K8S_WORKSPACE_SIZE } },
    });

    const again = await cluster.manager().ensure(session); // a second manager derives the same token
    expect(again).toMatchObject({ id: handle.id, created: false, token: handle.token });
    await manager.destroy(session);
  });

  it('concurrent ensures from ten managers create one pod; the losers adopt it after the server’s 409', async () => {
    const session = newSession();
    const handles = await Promise.all(Array.from({ length: 10 }, () => cluster.manager().ensure(session)));
    expect(new Set(handles.map((h) => h.id)).size).toBe(1);
    expect(handles.filter((h) => h.created)).toHaveLength(1);
    const pods = await admin.listNamespacedPod({
      namespace: ns,
      labelSelector: `agent-server.conversation-id=${session.conversationId}`,
    });
    expect(pods.items).toHaveLength(1);
    await cluster.manager().destroy(session);
  });

  it('after idle shutdown (pod Succeeded) the next call replaces the pod on the same claim, files kept', async () => {
    const manager = cluster.manager({ SANDBOX_IDLE_TIMEOUT_MS: '1500' });
    const session = newSession();
    const name = sandboxName(session);
    await manager.exec(session, { command: 'echo kept > f.txt' });
    const first = await pod(name);
    const claimUid = (await claim(name)).metadata?.uid;
    await waitFor(async () => (await pod(name)).status?.phase === 'Succeeded', 15_000, 'idle exit');
    const term = (await pod(name)).status?.containerStatuses?.[0]?.state?.terminated;
    expect(term?.exitCode).toBe(0);

    expect((await manager.exec(session, { command: 'cat f.txt' })).stdout).toBe('kept\n');
    const second = await pod(name);
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    expect((await claim(name)).metadata?.uid).toBe(claimUid);
    await manager.destroy(session);
  });

  it('a delete carrying a stale uid precondition is refused with 409, so a peer’s newer pod survives', async () => {
    const session = newSession();
    const { name } = await cluster.manager().ensure(session);
    const asManager = cluster.api.kubeConfig('manager', ns).makeApiClient(CoreV1Api);
    await expect(
      asManager.deleteNamespacedPod({
        name,
        namespace: ns,
        body: { preconditions: { uid: 'an-older-pod' } },
      }),
    ).rejects.toMatchObject({ code: 409 });
    expect(await podOrGone(name)).toBeDefined();
    await cluster.manager().destroy(session);
  });

  it('gives a clear error when the pod never becomes ready', async () => {
    cluster.kubelet.holdReason = 'ImagePullBackOff';
    try {
      const m = cluster.manager({ SANDBOX_READY_TIMEOUT_MS: '600' });
      const session = newSession();
      await expect(m.ensure(session)).rejects.toThrow(SandboxNotReadyError);
      await expect(m.ensure(session)).rejects.toThrow(
        /did not become ready within 600 ms \(phase Pending, ImagePullBackOff\)/,
      );
      await m.destroy(session);
    } finally {
      cluster.kubelet.holdReason = undefined;
    }
  });

  it('release keeps the claim; destroy removes pod, claim and secret; both tolerate absence', async () => {
    const manager = cluster.manager();
    const session = newSession();
    const { name } = await manager.ensure(session);
    await manager.release(session);
    expect(await podOrGone(name)).toBeUndefined();
    expect((await claim(name)).metadata?.deletionTimestamp).toBeUndefined();
    await manager.release(session);
    await manager.destroy(session);
    expect(await podOrGone(name)).toBeUndefined();
    await expect(admin.readNamespacedSecret({ name, namespace: ns })).rejects.toMatchObject({ code: 404 });
    // The claim is gone, or — held by the kubernetes.io/pvc-protection finalizer, which the
    // controller-manager (absent here) removes once no pod uses it — terminating.
    const left = await claim(name).catch(() => undefined);
    if (left) expect(left.metadata?.deletionTimestamp).toBeDefined();
    await manager.destroy(session);
    expect((await manager.list()).map((i) => i.name)).not.toContain(name);
  });

  it('a workspace cannot be copied to a fork: refused when the session has a claim, nothing to copy without one', async () => {
    const manager = cluster.manager();
    const session = newSession();
    const fork = { ...session, conversationId: `${session.conversationId}-fork` };
    expect(await manager.copyWorkspace(session, fork)).toBe('absent');
    await manager.ensure(session);
    await expect(manager.copyWorkspace(session, fork)).rejects.toBeInstanceOf(SandboxCopyUnsupportedError);
    await manager.destroy(session);
  });

  it('the reaper destroys sandboxes of deleted conversations and releases finished ones', async () => {
    const manager = cluster.manager();
    const gone = newSession();
    const finished = newSession();
    await Promise.all([manager.ensure(gone), manager.ensure(finished)]);
    cluster.kubelet.crash(sandboxName(finished));
    await waitFor(async () => (await pod(sandboxName(finished))).status?.phase === 'Failed', 10_000, 'crash');
    const reaper = new SandboxReaper({
      manager,
      logger: silentLogger,
      idleMs: 1000,
      now: () => Date.now() + 5000,
      isConversationLive: (s) => Promise.resolve(s.conversationId !== gone.conversationId),
    });
    const report = await reaper.runOnce();
    expect(report.destroyed).toContain(sandboxName(gone));
    expect(report.released).toContain(sandboxName(finished));
    expect(await podOrGone(sandboxName(finished))).toBeUndefined();
    expect((await claim(sandboxName(finished))).metadata?.deletionTimestamp).toBeUndefined();
    await manager.destroy(finished);
  });

  it('lists only its own installation’s sandboxes (label selectors on the server)', async () => {
    const mine = cluster.manager();
    const other = cluster.manager({ SANDBOX_INSTALLATION: 'another-release' });
    const a = newSession();
    const b = newSession();
    await Promise.all([mine.ensure(a), other.ensure(b)]);
    const names = async (m: typeof mine) => (await m.list()).map((i) => i.name);
    expect(await names(mine)).toContain(sandboxName(a));
    expect(await names(mine)).not.toContain(sandboxName(b));
    expect(await names(other)).toEqual([sandboxName(b)]);
    await Promise.all([mine.destroy(a), other.destroy(b)]);
  });
});
