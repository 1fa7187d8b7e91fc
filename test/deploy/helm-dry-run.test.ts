/**
 * Every object the chart renders, sent to a real kube-apiserver as a
 * server-side dry run (dryRun=All, strict field validation): the server's own
 * validation, defaulting and admission chain judge the manifests, where
 * helm-chart.test.ts checks them offline against the kubernetes-models schemas.
 * Also: the chart's pods pass the real PodSecurity admission at the restricted
 * level. Nothing is scheduled (no controllers, no kubelet): this proves the API
 * server accepts the objects, not that the pods would start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findHelm, renderChart, type K8sObject } from '../helpers/helm.js';
import { kubeBinariesOrSkip, startKubeApiServer, type KubeApiServer } from '../helpers/kube-apiserver.js';
import { KubeObjects } from '../helpers/kube-objects.js';
import { SERVICE_MONITOR_CRD } from './service-monitor-crd.js';

const helmBinary = findHelm();
if (!helmBinary) {
  const reason = 'helm not found (HELM_PATH, or ~/.cache/agent-server/helm-*/helm): run scripts/install-helm';
  if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true the chart dry run may not skip`);
  console.warn(`\n*** SKIPPING the chart dry run against a real kube-apiserver: ${reason} ***\n`);
}
const binaries = kubeBinariesOrSkip('the chart dry run against a real kube-apiserver');
const RELEASE_NS = 'agents';
const VALUE_SETS = ['ci/minimal-values.yaml', 'ci/production-values.yaml'];

type PodTemplate = { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> };
const podTemplate = (o: K8sObject): PodTemplate | undefined =>
  (o.spec as { template?: PodTemplate } | undefined)?.template;

describe.skipIf(!helmBinary || !binaries)('the Helm chart against a real kube-apiserver (dry run)', () => {
  let api: KubeApiServer;
  let kube: KubeObjects;

  beforeAll(async () => {
    if (!binaries) return;
    api = await startKubeApiServer(binaries);
    kube = new KubeObjects(api);
    await kube.apply([SERVICE_MONITOR_CRD], 'default');
    // The CRD's group is served once the CRD is Established: a second or so.
    for (let i = 0; (await api.fetch('admin', 'GET', '/apis/monitoring.coreos.com/v1')).status !== 200; i++) {
      if (i > 100) throw new Error('the ServiceMonitor CRD was never served');
      await new Promise((r) => setTimeout(r, 100));
    }
    kube.reset();
    await kube.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NS } }], 'default');
  });
  afterAll(async () => {
    await api?.stop();
  });

  /**
   * Namespaces first, dry-run and then created for real: a dry run creates
   * nothing, and NamespaceLifecycle admission refuses any object in a
   * namespace that does not exist.
   */
  async function dryRunAll(objs: K8sObject[]): Promise<string[]> {
    const failures: string[] = [];
    const namespaces = objs.filter((o) => o.kind === 'Namespace');
    for (const obj of [...namespaces, ...objs.filter((o) => o.kind !== 'Namespace')]) {
      const res = await kube.create(obj, { namespace: RELEASE_NS, dryRun: true });
      if (res.status !== 201)
        failures.push(`${obj.kind} ${obj.metadata.name}: HTTP ${res.status} ${res.message}`);
      if (obj.kind === 'Namespace' && res.status === 201) {
        const real = await kube.create(obj, { namespace: RELEASE_NS });
        expect([201, 409]).toContain(real.status);
      }
    }
    return failures;
  }

  for (const valuesFile of VALUE_SETS) {
    it(`${valuesFile}: every rendered object passes the API server's validation and admission`, async () => {
      const objs = await renderChart(helmBinary ?? '', { valuesFiles: [valuesFile] });
      expect(await dryRunAll(objs)).toEqual([]);
      if (valuesFile.includes('production')) {
        // The value set that renders every optional part: make sure none went missing.
        expect(new Set(objs.map((o) => o.kind))).toEqual(
          new Set([
            'Namespace', 'NetworkPolicy', 'PodDisruptionBudget', 'ServiceAccount', 'Role', 'RoleBinding',
            'Service', 'Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'ServiceMonitor', 'Job',
          ]), // prettier-ignore
        );
      }
    });
  }

  it('the dry run is not a rubber stamp: unknown fields and invalid values are refused', async () => {
    const objs = await renderChart(helmBinary ?? '', { valuesFiles: ['ci/production-values.yaml'] });
    const deployment = objs.find((o) => o.kind === 'Deployment');
    if (!deployment) throw new Error('no Deployment rendered');
    const misspelt = structuredClone(deployment);
    (podTemplate(misspelt)?.spec.containers as Array<Record<string, unknown>>)[0]!.imagePullPolicyy =
      'Always';
    const unknown = await kube.create(misspelt, { namespace: RELEASE_NS, dryRun: true });
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('unknown field "spec.template.spec.containers[0].imagePullPolicyy"');

    const invalid = structuredClone(deployment);
    (invalid.spec as { replicas?: number }).replicas = -1;
    const refused = await kube.create(invalid, { namespace: RELEASE_NS, dryRun: true });
    expect(refused.status).toBe(422);
    expect(refused.message).toContain('spec.replicas');
  });

  it("the chart's pods (api, worker, migrations) pass PodSecurity admission at the restricted level", async () => {
    const objs = await renderChart(helmBinary ?? '', { valuesFiles: ['ci/production-values.yaml'] });
    const ns = 'agents-restricted';
    await kube.apply(
      [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
        },
        // ServiceAccount admission refuses a pod whose ServiceAccount does not exist, even in a dry
        // run: the chart's own, and `default` (the migrations Job's), which in a cluster the
        // controller-manager creates in every namespace.
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } },
        ...objs
          .filter((o) => o.kind === 'ServiceAccount')
          .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } })),
      ],
      ns,
    );
    const templates = objs.flatMap((o) => {
      const t = podTemplate(o);
      return t ? [{ owner: `${o.kind} ${o.metadata.name}`, template: t }] : [];
    });
    expect(templates.map((t) => t.owner)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Deployment .*-api$/), expect.stringMatching(/^Job /)]),
    );
    const failures: string[] = [];
    for (const { owner, template } of templates) {
      const pod: K8sObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'from-template', namespace: ns, labels: template.metadata?.labels },
        spec: template.spec,
      };
      const res = await kube.create(pod, { namespace: ns, dryRun: true });
      if (res.status !== 201) failures.push(`${owner}: HTTP ${res.status} ${res.message}`);
    }
    expect(failures).toEqual([]);

    // The level is enforced here, not merely labelled: a pod with no security context is refused.
    const plain: K8sObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'plain', namespace: ns },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const refused = await kube.create(plain, { namespace: ns, dryRun: true });
    expect(refused.status).toBe(403);
    expect(refused.message).toContain('violates PodSecurity "restricted:latest"');
  });
});
