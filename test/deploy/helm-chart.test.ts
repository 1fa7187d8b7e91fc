/**
 * The Helm chart in deploy/helm/agent-server: `helm lint` and `helm template`
 * with several value sets, every rendered object validated against the
 * Kubernetes schemas (kubernetes-models: schema validators plus unknown
 * fields), and what an operator relies on: the sandbox Role grants exactly the
 * calls the Kubernetes sandbox manager makes, grace periods outlast
 * SHUTDOWN_TIMEOUT_MS, existing Secrets keep every value out of the manifests,
 * migrations run as a pre-install/pre-upgrade hook, pods are locked down.
 *
 * Nothing here is applied to a cluster: Helm renders offline.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSandboxConfig } from '../../activities/sandbox/sandbox-config.js';
import { LABEL } from '../../activities/sandbox/sandbox-manager.js';
import { loadConfig } from '../../core/config.js';
import { hostAllowed } from '../../core/security/allowed-hosts.js';
import { CHART_DIR, findHelm, helm, renderChart, templateArgs, type K8sObject } from '../helpers/helm.js';
import { validateK8sObject } from '../helpers/k8s-schema.js';

const CI = process.env.CI === 'true';
const ROOT = path.resolve(import.meta.dirname, '../..');
const helmBinary = findHelm();
if (!helmBinary) {
  const reason =
    'helm not found (HELM_PATH, or ~/.cache/agent-server/helm-*/helm): run scripts/install-helm and export HELM_PATH';
  if (CI) throw new Error(`${reason}; under CI=true the chart tests may not skip`);
  console.warn(`SKIPPING the Helm chart tests: ${reason}`);
}
const HELM = helmBinary ?? '';

const MINIMAL = 'ci/minimal-values.yaml';
const PRODUCTION = 'ci/production-values.yaml';

// The third set: the sandbox and a Temporal API key with every secret given as a value.
const INLINE_SANDBOX = [
  'sandbox={"enabled":true,"kubernetes":{"namespace":"agent-sandboxes"}}',
  'secrets.sandboxTokenSecret="sandbox-token-secret-0123456789abcdef"',
  'temporal.apiKey.value="temporal-cloud-api-key-value"',
  'config.shutdownTimeoutMs=600000',
];

interface SecretKeyRef {
  name: string;
  key: string;
  optional?: boolean;
}
interface Container {
  name: string;
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: SecretKeyRef } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
}
interface Volume {
  name: string;
  emptyDir?: unknown;
  projected?: { sources: Array<{ secret: { name: string; items: Array<{ key: string; path: string }> } }> };
}
interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  restartPolicy?: string;
  securityContext?: Record<string, unknown>;
}
type Labels = Record<string, string>;
/** The fields of the rendered kinds this test reads. */
interface Spec {
  replicas?: number;
  selector?: Record<string, unknown>;
  template?: { metadata: { labels: Labels; annotations: Labels }; spec: PodSpec };
  scaleTargetRef?: unknown;
  minReplicas?: number;
  maxReplicas?: number;
  metrics?: Array<{ resource?: unknown }>;
  ports?: Array<{ name: string }>;
  podSelector?: unknown;
  policyTypes?: string[];
  ingress?: unknown[];
  egress?: unknown[];
  endpoints?: Array<{ port: string; path: string; authorization?: unknown }>;
}
interface Obj extends K8sObject {
  spec?: Spec;
  data?: unknown;
  stringData?: Record<string, string>;
  rules?: Array<Record<string, string[]>>;
  roleRef?: unknown;
  subjects?: unknown;
}

const find = (objs: Obj[], kind: string, name?: string): Obj[] =>
  objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const one = (objs: Obj[], kind: string, name: string): Obj => {
  const found = find(objs, kind, name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return found[0] as Obj;
};
const spec = (o: Obj): Spec => {
  if (!o.spec) throw new Error(`${o.kind} ${o.metadata.name} has no spec`);
  return o.spec;
};
const podSpec = (o: Obj): PodSpec => {
  const template = spec(o).template;
  if (!template) throw new Error(`${o.kind} ${o.metadata.name} has no pod template`);
  return template.spec;
};
const container = (o: Obj): Container => {
  const [first] = podSpec(o).containers;
  if (!first) throw new Error(`${o.kind} ${o.metadata.name} has no container`);
  return first;
};
const matchLabels = (o: Obj): Labels => (spec(o).selector?.matchLabels ?? {}) as Labels;
const envOf = (c: Container, name: string) => c.env?.find((e) => e.name === name);
const plainEnv = (c: Container): Record<string, string> =>
  Object.fromEntries((c.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
const secretRefs = (objs: Obj[]): SecretKeyRef[] =>
  objs
    .filter((o) => o.spec?.template)
    .flatMap((o) => podSpec(o).containers.flatMap((c) => c.env ?? []))
    .flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : []));

/** The calls activities/sandbox/kubernetes/manager.ts makes, as RBAC resources → verbs. */
function managerPermissions(): Map<string, Set<string>> {
  const source = readFileSync(path.join(ROOT, 'activities/sandbox/kubernetes/manager.ts'), 'utf8');
  // Every client the manager builds must be the CoreV1Api this derivation reads.
  expect(source.match(/makeApiClient\((\w+)\)/g)).toEqual(['makeApiClient(CoreV1Api)']);
  const verbs: Record<string, string> = {
    read: 'get',
    list: 'list',
    create: 'create',
    delete: 'delete',
    patch: 'patch',
    replace: 'update',
    deleteCollection: 'deletecollection',
  };
  const calls = [...source.matchAll(/this\.core\.(\w+)\(/g)].map((m) => m[1] ?? '');
  const out = new Map<string, Set<string>>();
  for (const call of calls) {
    const m = /^(read|list|create|delete|patch|replace|deleteCollection)Namespaced([A-Z]\w*)$/.exec(call);
    if (!m)
      throw new Error(`the sandbox manager calls CoreV1Api.${call}: map it to RBAC here and in the chart`);
    const resource = `${(m[2] ?? '').toLowerCase()}s`;
    const set = out.get(resource) ?? new Set<string>();
    set.add(verbs[m[1] ?? ''] ?? '');
    out.set(resource, set);
  }
  return out;
}

describe.skipIf(!helmBinary)('Helm chart deploy/helm/agent-server', () => {
  let minimal: Obj[];
  let production: Obj[];
  let inlineSandbox: Obj[];

  beforeAll(async () => {
    [minimal, production, inlineSandbox] = await Promise.all([
      renderChart(HELM, { valuesFiles: [MINIMAL] }),
      renderChart(HELM, { valuesFiles: [PRODUCTION] }),
      renderChart(HELM, { valuesFiles: [MINIMAL], setJson: INLINE_SANDBOX }),
    ]);
  });

  it("has the application's version as appVersion", () => {
    const chart = readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8');
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatch(/^apiVersion: v2$/m);
    expect(/^appVersion: '?([^'\n]+)'?$/m.exec(chart)?.[1]).toBe(pkg.version);
  });

  it('passes helm lint --strict with each CI value set', async () => {
    for (const file of [MINIMAL, PRODUCTION]) {
      const result = await helm(HELM, [
        'lint',
        '--strict',
        CHART_DIR,
        '--values',
        path.join(CHART_DIR, file),
      ]);
      expect(result.ok, `${file}: ${result.stdout}${result.stderr}`).toBe(true);
      expect(result.stdout).toContain('0 chart(s) failed');
    }
  });

  it('renders only objects that are valid against the Kubernetes schemas', () => {
    for (const [name, objs] of Object.entries({ minimal, production, inlineSandbox })) {
      expect(objs.length, name).toBeGreaterThan(5);
      const problems = objs.flatMap((o) =>
        validateK8sObject(o).map((p) => `${name}: ${o.kind} ${o.metadata.name}: ${p}`),
      );
      expect(problems).toEqual([]);
    }
  });

  it('renders each set of features, and nothing for the features left off', () => {
    const kinds = (objs: Obj[]) => [...new Set(objs.map((o) => o.kind))].sort();
    expect(kinds(minimal)).toEqual(
      [
        'Deployment',
        'HorizontalPodAutoscaler',
        'Job',
        'PodDisruptionBudget',
        'Secret',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    expect(kinds(production)).toEqual(
      [
        'Deployment',
        'HorizontalPodAutoscaler',
        'Ingress',
        'Job',
        'Namespace',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'Service',
        'ServiceAccount',
        'ServiceMonitor',
      ].sort(),
    );
    // The Deployment leaves replicas to the HPA, which targets it.
    const api = one(minimal, 'Deployment', 'rel-agent-server-api');
    expect(spec(api).replicas).toBeUndefined();
    const hpa = one(minimal, 'HorizontalPodAutoscaler', 'rel-agent-server-api');
    expect(spec(hpa).scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'rel-agent-server-api',
    });
    expect(spec(hpa).metrics?.[0]?.resource).toEqual({
      name: 'cpu',
      target: { type: 'Utilization', averageUtilization: 70 },
    });
    expect([spec(hpa).minReplicas, spec(hpa).maxReplicas]).toEqual([2, 10]);
    // Each PDB and Service selects exactly its component's pods.
    for (const component of ['api', 'worker']) {
      const deployment = one(minimal, 'Deployment', `rel-agent-server-${component}`);
      const pdb = one(minimal, 'PodDisruptionBudget', `rel-agent-server-${component}`);
      expect(spec(pdb).selector).toEqual(spec(deployment).selector);
      expect(spec(deployment).template?.metadata.labels).toMatchObject(matchLabels(deployment));
    }
    const service = one(minimal, 'Service', 'rel-agent-server');
    expect(spec(service).selector).toEqual(matchLabels(api));
  });

  it('refuses to render without the values an installation cannot work without, naming them', async () => {
    const bare = await helm(HELM, templateArgs());
    expect(bare.ok).toBe(false);
    expect(bare.stderr).toContain('temporal.address is required');
    const noSecrets = await helm(
      HELM,
      templateArgs({ setJson: ['temporal.address="t:7233"', 'postgresql.url="postgres://db/agent"'] }),
    );
    expect(noSecrets.stderr).toContain('secrets.secretsKey');
    const both = await helm(
      HELM,
      templateArgs({ valuesFiles: [MINIMAL], setJson: ['secrets.existingSecret="mine"'] }),
    );
    expect(both.ok).toBe(false);
    expect(both.stderr).toContain('secrets.existingSecret is set');
    // A CA without a verifying sslmode would stop every pod at start-up: refused here instead.
    const caWithoutMode = await helm(
      HELM,
      templateArgs({ valuesFiles: [MINIMAL], setJson: ['postgresql.ssl.ca.secretName="postgres-ca"'] }),
    );
    expect(caWithoutMode.ok).toBe(false);
    expect(caWithoutMode.stderr).toContain('need postgresql.ssl.mode');
    // values.schema.json: a misspelt key and a malformed SECRETS_KEY are refused before any template runs.
    const typo = await helm(HELM, templateArgs({ valuesFiles: [MINIMAL], setJson: ['api.replicas=3'] }));
    expect(typo.ok).toBe(false);
    expect(typo.stderr).toMatch(/additional properties 'replicas' not allowed/i);
    const badKey = await helm(
      HELM,
      templateArgs({ valuesFiles: [MINIMAL], setJson: ['secrets.secretsKey="not-base64-32-bytes"'] }),
    );
    expect(badKey.ok).toBe(false);
    expect(badKey.stderr).toContain('secretsKey');
  });

  it('grants the sandbox manager exactly the calls it makes, in the sandbox namespace only', () => {
    const expected = managerPermissions();
    expect([...expected.keys()].sort()).toEqual(['persistentvolumeclaims', 'pods', 'secrets']);
    for (const objs of [production, inlineSandbox]) {
      const roles = find(objs, 'Role');
      expect(roles).toHaveLength(1);
      const role = roles[0] as Obj;
      const granted = new Map<string, Set<string>>();
      for (const rule of role.rules ?? []) {
        expect(Object.keys(rule).sort()).toEqual(['apiGroups', 'resources', 'verbs']); // no resourceNames, no nonResourceURLs
        expect(rule.apiGroups).toEqual(['']);
        for (const resource of rule.resources ?? []) {
          const set = granted.get(resource) ?? new Set<string>();
          for (const verb of rule.verbs ?? []) set.add(verb);
          granted.set(resource, set);
        }
      }
      expect(granted).toEqual(expected);
      expect(find(objs, 'ClusterRole')).toEqual([]);
      expect(find(objs, 'ClusterRoleBinding')).toEqual([]);

      const worker = one(objs, 'Deployment', 'rel-agent-server-worker');
      const namespace = envOf(container(worker), 'SANDBOX_K8S_NAMESPACE')?.value;
      expect(role.metadata.namespace).toBe(namespace);
      expect(namespace).not.toBe('agents');
      const binding = one(objs, 'RoleBinding', role.metadata.name);
      expect(binding.metadata.namespace).toBe(namespace);
      expect(binding.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: role.metadata.name,
      });
      // Bound to the worker's ServiceAccount, which only the worker uses and only it mounts.
      const sa = podSpec(worker).serviceAccountName;
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa, namespace: 'agents' }]);
      expect(podSpec(worker).automountServiceAccountToken).toBe(true);
      const api = one(objs, 'Deployment', 'rel-agent-server-api');
      expect(podSpec(api).serviceAccountName).not.toBe(sa);
      expect(podSpec(api).automountServiceAccountToken).toBe(false);
    }
    // Without the sandbox, no token is mounted anywhere.
    expect(find(minimal, 'Role')).toEqual([]);
    for (const d of find(minimal, 'Deployment')) expect(podSpec(d).automountServiceAccountToken).toBe(false);
  });

  it("gives the worker sandbox settings the worker's own validation accepts", () => {
    for (const objs of [production, inlineSandbox]) {
      const worker = container(one(objs, 'Deployment', 'rel-agent-server-worker'));
      const env = { ...plainEnv(worker), SANDBOX_TOKEN_SECRET: 'x'.repeat(32) };
      const config = loadSandboxConfig(env);
      expect(config.enabled).toBe(true);
      expect(config.backend).toBe('kubernetes');
      expect(config.installation).toBe('rel-agent-server');
      expect(envOf(worker, 'SANDBOX_TOKEN_SECRET')?.valueFrom?.secretKeyRef).toBeDefined();
    }
    const prod = loadSandboxConfig({
      ...plainEnv(container(one(production, 'Deployment', 'rel-agent-server-worker'))),
    });
    expect(prod.k8s).toEqual({
      namespace: 'rel-agent-server-sandboxes',
      storageClass: 'fast-ssd',
      workspaceSize: '5Gi',
      daemonPort: 8080,
    });
  });

  it('closes sandbox egress by default and lets only this release’s workers reach the daemon port', () => {
    const ns = one(production, 'Namespace', 'rel-agent-server-sandboxes');
    expect(ns.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const [objs, egress] of [
      [inlineSandbox, []],
      [
        production,
        [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }] }],
      ],
    ] as const) {
      const policy = one(objs, 'NetworkPolicy', 'rel-agent-server-sandboxes');
      const worker = one(objs, 'Deployment', 'rel-agent-server-worker');
      const env = plainEnv(container(worker));
      expect(policy.metadata.namespace).toBe(env.SANDBOX_K8S_NAMESPACE);
      // The labels the manager puts on every sandbox pod of this installation.
      expect(spec(policy).podSelector).toEqual({
        matchLabels: { [LABEL.sandbox]: '1', [LABEL.installation]: env.SANDBOX_INSTALLATION },
      });
      expect(spec(policy).policyTypes).toEqual(['Ingress', 'Egress']);
      expect(spec(policy).egress).toMatchObject(egress);
      expect(spec(policy).egress).toHaveLength(egress.length);
      expect(spec(policy).ingress).toEqual([
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agents' } },
              podSelector: { matchLabels: matchLabels(worker) },
            },
          ],
          ports: [{ port: Number(env.SANDBOX_K8S_DAEMON_PORT), protocol: 'TCP' }],
        },
      ]);
    }
  });

  it('gives pods longer to stop than SHUTDOWN_TIMEOUT_MS', () => {
    for (const objs of [minimal, production, inlineSandbox]) {
      for (const name of ['rel-agent-server-worker', 'rel-agent-server-api']) {
        const d = one(objs, 'Deployment', name);
        const shutdownMs = Number(envOf(container(d), 'SHUTDOWN_TIMEOUT_MS')?.value);
        expect(shutdownMs).toBeGreaterThan(0);
        const graceS = podSpec(d).terminationGracePeriodSeconds ?? 0;
        expect(graceS * 1000, `${name}: ${graceS}s for ${shutdownMs} ms`).toBeGreaterThan(shutdownMs);
      }
    }
    // 45500 ms (production values) is 46 s rounded up, plus the default 30 s margin.
    expect(
      podSpec(one(production, 'Deployment', 'rel-agent-server-worker')).terminationGracePeriodSeconds,
    ).toBe(76);
    expect(
      podSpec(one(inlineSandbox, 'Deployment', 'rel-agent-server-worker')).terminationGracePeriodSeconds,
    ).toBe(630);
  });

  it('renders no secret value when every secret comes from an existing Secret', () => {
    expect(find(production, 'Secret')).toEqual([]);
    for (const o of production) {
      expect(o.data, `${o.kind} ${o.metadata.name}`).toBeUndefined();
      expect(o.stringData, `${o.kind} ${o.metadata.name}`).toBeUndefined();
    }
    const byEnv = (name: string) =>
      container(one(production, 'Deployment', 'rel-agent-server-worker')).env?.find((e) => e.name === name)
        ?.valueFrom?.secretKeyRef;
    expect(byEnv('SECRETS_KEY')).toEqual({ name: 'agent-server-secrets', key: 'SECRETS_KEY' });
    expect(byEnv('ADMIN_TOKEN')).toEqual({ name: 'agent-server-secrets', key: 'ADMIN_TOKEN' });
    expect(byEnv('SANDBOX_TOKEN_SECRET')).toEqual({
      name: 'agent-server-secrets',
      key: 'SANDBOX_TOKEN_SECRET',
    });
    expect(byEnv('SECRETS_KEY_PREVIOUS')).toEqual({
      name: 'agent-server-secrets',
      key: 'SECRETS_KEY_PREVIOUS',
      optional: true,
    });
    expect(byEnv('DATABASE_URL')).toEqual({ name: 'agent-server-db', key: 'uri' });
    expect(byEnv('TEMPORAL_API_KEY')).toEqual({ name: 'temporal-cloud', key: 'api-key' });
    const names = new Set(secretRefs(production).map((r) => r.name));
    expect([...names].sort()).toEqual(['agent-server-db', 'agent-server-secrets', 'temporal-cloud']);
  });

  it("keeps values given inline in the chart's Secret, never in a pod spec", () => {
    const secret = one(inlineSandbox, 'Secret', 'rel-agent-server');
    expect(Object.keys(secret.stringData ?? {}).sort()).toEqual(
      ['ADMIN_TOKEN', 'DATABASE_URL', 'SANDBOX_TOKEN_SECRET', 'SECRETS_KEY', 'TEMPORAL_API_KEY'].sort(),
    );
    const values = Object.values(secret.stringData ?? {});
    for (const o of inlineSandbox.filter((x) => x.kind !== 'Secret')) {
      const text = JSON.stringify(o);
      for (const v of values) expect(text, `${o.kind} ${o.metadata.name}`).not.toContain(v);
    }
    for (const ref of secretRefs(inlineSandbox)) {
      expect(['rel-agent-server', 'rel-agent-server-migrations']).toContain(ref.name);
    }
    // A change of any secret rolls the pods.
    const checksums = find(inlineSandbox, 'Deployment').map(
      (d) => spec(d).template?.metadata.annotations['checksum/secret'],
    );
    expect(checksums[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(checksums).size).toBe(1);
  });

  it('runs the migrations as a pre-install/pre-upgrade hook Job', () => {
    for (const objs of [minimal, production]) {
      const job = one(objs, 'Job', 'rel-agent-server-migrations');
      expect(job.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-install,pre-upgrade',
        'helm.sh/hook-delete-policy': 'before-hook-creation',
      });
      const pod = podSpec(job);
      expect(pod.restartPolicy).toBe('Never');
      expect(container(job).args).toEqual(['migrate']);
      expect(envOf(container(job), 'DATABASE_URL')?.valueFrom?.secretKeyRef).toBeDefined();
    }
    // The chart's own Secret does not exist yet on a first install: DATABASE_URL given as a value
    // reaches the Job through a hook Secret created just before it and deleted once the hooks succeed.
    const hookSecret = one(minimal, 'Secret', 'rel-agent-server-migrations');
    const job = one(minimal, 'Job', 'rel-agent-server-migrations');
    expect(hookSecret.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(Number(hookSecret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight'] ?? 0),
    );
    expect(envOf(container(job), 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'rel-agent-server-migrations',
      key: 'DATABASE_URL',
    });
    expect(envOf(container(one(production, 'Job', 'rel-agent-server-migrations')), 'DATABASE_URL')).toEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'agent-server-db', key: 'uri' } },
    });
  });

  it('locks every pod down by default: non-root, read-only root, no capabilities, RuntimeDefault seccomp, bounded', () => {
    for (const objs of [minimal, production]) {
      const workloads = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
      expect(workloads).toHaveLength(3);
      for (const w of workloads) {
        const pod = podSpec(w);
        const at = `${w.kind} ${w.metadata.name}`;
        expect(pod.securityContext, at).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(pod.enableServiceLinks, at).toBe(false);
        for (const c of pod.containers) {
          expect(c.securityContext, at).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            privileged: false,
            capabilities: { drop: ['ALL'] },
          });
          expect(Object.keys(c.resources?.requests ?? {}).sort(), at).toEqual(['cpu', 'memory']);
          expect(Object.keys(c.resources?.limits ?? {}).sort(), at).toEqual(['cpu', 'memory']);
          // The only writable path: /tmp, an emptyDir (DATA_DIR lives under it).
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          expect(tmp, at).toBeDefined();
          const volumes = pod.volumes ?? [];
          expect(volumes.find((v) => v.name === tmp?.name)?.emptyDir, at).toBeDefined();
          expect(envOf(c, 'DATA_DIR')?.value, at).toMatch(/^\/tmp\//);
        }
      }
    }
  });

  it('probes the API on its health endpoints and exposes both roles to Prometheus', () => {
    const api = container(one(production, 'Deployment', 'rel-agent-server-api'));
    expect(api.args).toEqual(['api']);
    expect(api.readinessProbe?.httpGet).toEqual({ path: '/api/agent-server/health/ready', port: 'http' });
    expect(api.livenessProbe?.httpGet).toEqual({ path: '/api/agent-server/health', port: 'http' });
    expect(api.ports).toEqual([{ name: 'http', containerPort: 6060, protocol: 'TCP' }]);
    expect(plainEnv(api)).toMatchObject({ HOST: '0.0.0.0', PORT: '6060' });

    const workerDeployment = one(production, 'Deployment', 'rel-agent-server-worker');
    const worker = container(workerDeployment);
    expect(worker.args).toEqual(['worker']);
    const metricsPort = Number(envOf(worker, 'WORKER_METRICS_PORT')?.value);
    expect(worker.ports).toEqual([{ name: 'metrics', containerPort: metricsPort, protocol: 'TCP' }]);

    const monitors = find(production, 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([
      'rel-agent-server-api',
      'rel-agent-server-worker',
    ]);
    for (const monitor of monitors) {
      expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor.metadata.labels?.release).toBe('prometheus');
      const [endpoint] = spec(monitor).endpoints ?? [];
      // The port the ServiceMonitor names exists on a Service it selects.
      const services = find(production, 'Service').filter((s) =>
        Object.entries(matchLabels(monitor)).every(([k, v]) => s.metadata.labels?.[k] === v),
      );
      expect(services.flatMap((s) => (spec(s).ports ?? []).map((p) => p.name))).toContain(endpoint?.port);
      expect(endpoint?.path).toBe('/metrics');
      // Prometheus presents the ADMIN_TOKEN (no METRICS_TOKEN here) from the same Secret the pods read.
      expect(endpoint?.authorization).toEqual({
        type: 'Bearer',
        credentials: { name: 'agent-server-secrets', key: 'ADMIN_TOKEN' },
      });
    }
    expect(find(minimal, 'ServiceMonitor')).toEqual([]);
  });

  it('sets ALLOWED_HOSTS on the api: its ingress hosts, its Service names, and api.allowedHosts', async () => {
    const allowed = (objs: Obj[]) =>
      plainEnv(container(one(objs, 'Deployment', 'rel-agent-server-api'))).ALLOWED_HOSTS ?? '';
    const service = ['rel-agent-server', 'rel-agent-server.agents', 'rel-agent-server.agents.svc'];
    expect(allowed(production).split(',')).toEqual([
      'agents.example.com',
      ...service,
      'rel-agent-server.agents.svc.cluster.local',
    ]);
    expect(allowed(minimal).split(',')).toEqual([...service, 'rel-agent-server.agents.svc.cluster.local']);
    const overridden = await renderChart(HELM, {
      valuesFiles: [PRODUCTION],
      setJson: [
        'api.allowedHosts=["agents.internal.example","*.corp.example"]',
        'clusterDomain="k8s.example"',
      ],
    });
    const value = allowed(overridden);
    expect(value.split(',')).toEqual([
      'agents.example.com',
      ...service,
      'rel-agent-server.agents.svc.k8s.example',
      'agents.internal.example',
      '*.corp.example',
    ]);
    // The api accepts the rendered value and answers those names, bound as in the chart.
    const config = loadConfig({ HOST: '0.0.0.0', ALLOWED_HOSTS: value });
    for (const host of ['agents.example.com', 'rel-agent-server.agents.svc:80', 'ui.corp.example'])
      expect(hostAllowed(config.allowedHosts, host), host).toBe(true);
    expect(hostAllowed(config.allowedHosts, 'attacker.example')).toBe(false);
    // Only the api serves the configuration API.
    expect(envOf(container(one(production, 'Deployment', 'rel-agent-server-worker')), 'ALLOWED_HOSTS')).toBe(
      undefined,
    );
  });

  it('has the ServiceMonitors send METRICS_TOKEN when one is configured, else the ADMIN_TOKEN', async () => {
    const credentials = (objs: Obj[]) =>
      find(objs, 'ServiceMonitor').map((m) => (spec(m).endpoints ?? [])[0]?.authorization);
    // metrics.requireToken left at false: /metrics needs the token all the same (ADMIN_TOKEN is set).
    const adminOnly = await renderChart(HELM, {
      valuesFiles: [MINIMAL],
      setJson: ['metrics.serviceMonitor.enabled=true'],
    });
    expect(credentials(adminOnly)).toEqual(
      Array(2).fill({ type: 'Bearer', credentials: { name: 'rel-agent-server', key: 'ADMIN_TOKEN' } }),
    );
    expect(envOf(container(one(adminOnly, 'Deployment', 'rel-agent-server-api')), 'METRICS_TOKEN')).toBe(
      undefined,
    );

    const inline = await renderChart(HELM, {
      valuesFiles: [MINIMAL],
      setJson: ['metrics.serviceMonitor.enabled=true', 'secrets.metricsToken="metrics-token-0123456789"'],
    });
    expect(credentials(inline)).toEqual(
      Array(2).fill({ type: 'Bearer', credentials: { name: 'rel-agent-server', key: 'METRICS_TOKEN' } }),
    );
    expect(one(inline, 'Secret', 'rel-agent-server').stringData?.METRICS_TOKEN).toBe(
      'metrics-token-0123456789',
    );
    for (const role of ['api', 'worker'])
      expect(
        envOf(container(one(inline, 'Deployment', `rel-agent-server-${role}`)), 'METRICS_TOKEN')?.valueFrom
          ?.secretKeyRef,
        role,
      ).toEqual({ name: 'rel-agent-server', key: 'METRICS_TOKEN' });

    const existing = await renderChart(HELM, {
      valuesFiles: [PRODUCTION],
      setJson: ['secrets.existingSecretKeys.metricsToken="prometheus-token"'],
    });
    expect(credentials(existing)).toEqual(
      Array(2).fill({
        type: 'Bearer',
        credentials: { name: 'agent-server-secrets', key: 'prometheus-token' },
      }),
    );
    expect(
      envOf(container(one(existing, 'Deployment', 'rel-agent-server-worker')), 'METRICS_TOKEN')?.valueFrom
        ?.secretKeyRef,
    ).toEqual({ name: 'agent-server-secrets', key: 'prometheus-token' });
  });

  it('passes Temporal and PostgreSQL TLS material as files from their Secrets', () => {
    const deployment = one(production, 'Deployment', 'rel-agent-server-worker');
    const c = container(deployment);
    const env = plainEnv(c);
    expect(env).toMatchObject({
      TEMPORAL_ADDRESS: 'prod.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'prod.a1b2c',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_SERVER_NAME: 'prod.a1b2c.tmprl.cloud',
      TEMPORAL_TLS_CA: '/etc/agent-server/temporal-tls/ca.crt',
      TEMPORAL_TLS_CERT: '/etc/agent-server/temporal-tls/tls.crt',
      TEMPORAL_TLS_KEY: '/etc/agent-server/temporal-tls/tls.key',
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_SSL_CA: '/etc/agent-server/postgresql-tls/ca.crt',
      DATABASE_POOL_MAX: '10',
    });
    const volumes = podSpec(deployment).volumes ?? [];
    const mounts = c.volumeMounts ?? [];
    // Every TLS path points into a mounted projection of the named Secrets.
    for (const file of ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'DATABASE_SSL_CA']) {
      const p = env[file] ?? '';
      const mount = mounts.find((m) => p.startsWith(`${m.mountPath}/`));
      expect(mount, file).toBeDefined();
      const volume = volumes.find((v) => v.name === mount?.name);
      const items = (volume?.projected?.sources ?? []).flatMap((s) => s.secret.items);
      expect(
        items.map((i) => i.path),
        file,
      ).toContain(path.basename(p));
    }
    const secretsUsed = volumes.flatMap((v) => (v.projected?.sources ?? []).map((s) => s.secret.name));
    expect(secretsUsed.sort()).toEqual(['postgres-ca', 'temporal-ca', 'temporal-client-tls']);
    expect(plainEnv(container(one(minimal, 'Deployment', 'rel-agent-server-worker')))).not.toHaveProperty(
      'TEMPORAL_TLS_CA',
    );
  });
});
