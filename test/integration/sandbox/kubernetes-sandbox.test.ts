/**
 * The Kubernetes backend against the local fake API server, only for what a
 * real API server cannot show: the request bodies the manager sends (the
 * fake records them). Everything else — creation, adoption after 409,
 * replacement after idle shutdown, readiness timeout, release, destroy, the
 * reaper, RBAC — runs against a real kube-apiserver in k8s-real.test.ts.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesSandboxManager } from '../../../activities/sandbox/kubernetes/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
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

  it('the delete replacing a finished pod carries its uid as a precondition and grace 0 in its body', async () => {
    const session = newSession();
    const first = await manager.ensure(session);
    fake.finishPod(first.name, 'Succeeded');
    const second = await make().ensure(session);
    expect(second.id).not.toBe(first.id);
    expect(second.created).toBe(true);
    const deletes = fake.requests.filter(
      (r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${first.name}`),
    );
    // In the body: the API server ignores the query's DeleteOptions when a body is sent.
    expect(deletes[0]?.body).toEqual({ gracePeriodSeconds: 0, preconditions: { uid: first.id } });
    expect(fake.store.persistentvolumeclaims.get(`${first.name}-workspace`)).toBeDefined();

    await manager.release(session); // no uid to guard: still grace 0, in the body
    expect(fake.requests.filter((r) => r.method === 'DELETE').at(-1)?.body).toEqual({
      gracePeriodSeconds: 0,
    });
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
});
