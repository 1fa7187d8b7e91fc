/**
 * The Kubernetes backend against the local fake API server (no cluster can
 * run here): request bodies, idempotence, 409 adoption, replacement of a
 * finished pod on the same claim, readiness timeout, destroy and the reaper.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SandboxNotReadyError } from '../../../activities/sandbox/errors.js';
import { KubernetesSandboxManager } from '../../../activities/sandbox/kubernetes/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
import { SandboxReaper } from '../../../activities/sandbox/sandbox-reaper.js';
import { K8sFake } from '../../fixtures/k8s-fake/k8s-fake-server.js';
import { newSession, silentLogger, TEST_SECRET } from './docker-harness.js';

const config = (env: Record<string, string> = {}) =>
  loadSandboxConfig({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'kubernetes',
    SANDBOX_K8S_NAMESPACE: 'sandboxes',
    SANDBOX_MEMORY_MB: '300',
    SANDBOX_CPUS: '0.5',
    SANDBOX_READY_TIMEOUT_MS: '3000',
    ...env,
  });

describe('kubernetes sandbox (against a local fake API server)', () => {
  const fake = new K8sFake();
  let manager: KubernetesSandboxManager;
  const make = (env: Record<string, string> = {}) =>
    new KubernetesSandboxManager(config(env), silentLogger, TEST_SECRET, {
      kubeConfig: fake.kubeConfig(),
      pollIntervalMs: 20,
    });

  beforeAll(async () => {
    await fake.start();
  });
  beforeEach(() => {
    fake.neverReady = false;
    fake.requests.length = 0;
    manager = make();
  });
  afterAll(() => fake.stop());

  const posts = (kind: string) =>
    fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/${kind}`));

  it('creates a secret, a claim and a locked-down pod, then reuses it', async () => {
    const session = newSession();
    const handle = await manager.ensure(session, { skills: [{ name: 'csv', configMap: 'skill-csv' }] });
    const name = sandboxName(session);
    expect(handle).toMatchObject({
      name,
      created: true,
      endpoint: { kind: 'http', url: 'http://127.0.0.1:8080' },
    });

    const pod = posts('pods')[0]?.body as V1Pod;
    expect(pod.metadata?.labels).toMatchObject({
      'agent-server.conversation-id': session.conversationId,
      'agent-server.sandbox': '1',
    });
    expect(pod.spec?.restartPolicy).toBe('Never');
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    const container = pod.spec?.containers[0];
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.resources?.limits).toEqual({ memory: '300Mi', cpu: '0.5' });
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/health', port: 8080 });
    expect(container?.volumeMounts).toContainEqual({
      name: 'skill-0',
      mountPath: '/sandbox/skills/csv',
      readOnly: true,
    });
    expect(container?.env).toContainEqual({
      name: 'SANDBOX_TOKEN',
      valueFrom: { secretKeyRef: { name, key: 'token' } },
    });
    expect(JSON.stringify(pod)).not.toContain(handle.token); // the token lives in the Secret only
    expect(fake.store.secrets.get(name)?.data).toEqual({
      token: Buffer.from(handle.token).toString('base64'),
    });
    expect(fake.store.persistentvolumeclaims.has(`${name}-workspace`)).toBe(true);

    const again = await make().ensure(session); // a second manager instance derives the same token
    expect(again).toMatchObject({ id: handle.id, created: false, token: handle.token });
    expect(posts('pods')).toHaveLength(1);
  });

  it('concurrent ensures from several managers create one pod; losers adopt it after 409', async () => {
    const session = newSession();
    const handles = await Promise.all(Array.from({ length: 10 }, () => make().ensure(session)));
    expect(new Set(handles.map((h) => h.id)).size).toBe(1);
    expect(handles.filter((h) => h.created)).toHaveLength(1);
    expect(
      [...fake.store.pods.values()].filter((p) => p.metadata.name === sandboxName(session)),
    ).toHaveLength(1);
  });

  it('replaces a finished pod (idle shutdown) on the same claim', async () => {
    const session = newSession();
    const first = await manager.ensure(session);
    fake.finishPod(first.name, 'Succeeded');
    const second = await make().ensure(session);
    expect(second.id).not.toBe(first.id);
    expect(second.created).toBe(true);
    const deletes = fake.requests.filter(
      (r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${first.name}`),
    );
    expect(deletes[0]?.body).toMatchObject({ preconditions: { uid: first.id } });
    expect(fake.store.persistentvolumeclaims.get(`${first.name}-workspace`)).toBeDefined();
  });

  it('gives a clear error when the pod never becomes ready', async () => {
    fake.neverReady = true;
    const m = make({ SANDBOX_READY_TIMEOUT_MS: '300' });
    await expect(m.ensure(newSession())).rejects.toThrow(SandboxNotReadyError);
    await expect(m.ensure(newSession())).rejects.toThrow(
      /did not become ready within 300 ms \(phase Pending\)/,
    );
  });

  it('the fake rejects bodies that do not match the Kubernetes types', async () => {
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const bad = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'Bad_Name' },
      spec: { containers: [{ name: 'x' }] },
    } as V1Pod;
    await expect(core.createNamespacedPod({ namespace: 'sandboxes', body: bad })).rejects.toMatchObject({
      code: 400,
    });
    const res = await fetch(`${fake.url}/api/v1/namespaces/sandboxes/pods`, {
      method: 'POST',
      headers: { authorization: 'Bearer fake-token' },
      body: JSON.stringify({
        metadata: { name: 'ok' },
        spec: { containers: [{ name: 'c', image: 'i', imagePullPolicyy: 'Never' }] },
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('imagePullPolicyy: unknown field');
  });

  it('destroy removes pod, claim and secret; release keeps the claim; both tolerate 404', async () => {
    const session = newSession();
    const { name } = await manager.ensure(session);
    await manager.release(session);
    expect(fake.store.pods.has(name)).toBe(false);
    expect(fake.store.persistentvolumeclaims.has(`${name}-workspace`)).toBe(true);
    await manager.release(session);
    await manager.destroy(session);
    expect([
      fake.store.pods.has(name),
      fake.store.persistentvolumeclaims.has(`${name}-workspace`),
      fake.store.secrets.has(name),
    ]).toEqual([false, false, false]);
    await manager.destroy(session);
  });

  it('the reaper destroys sandboxes of deleted conversations and releases long-finished ones', async () => {
    const gone = newSession();
    const finished = newSession();
    await Promise.all([manager.ensure(gone), manager.ensure(finished)]);
    fake.finishPod(sandboxName(finished), 'Succeeded');
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
    expect(fake.store.persistentvolumeclaims.has(`${sandboxName(finished)}-workspace`)).toBe(true);
    expect(fake.store.pods.has(sandboxName(finished))).toBe(false);
  });
});
