/**
 * Validates Kubernetes objects against the `kubernetes-models` packages, in two
 * passes:
 * - the models' JSON-schema validators: types, formats, required fields, enums;
 * - unknown fields, which those validators accept (their schemas allow extra
 *   properties) but an API server with strict field validation refuses and
 *   which, in a chart, are nearly always a misplaced or misspelt key. They are
 *   found by walking each object along the models' own TypeScript declarations
 *   with the compiler's type checker.
 */
import path from 'node:path';
import ts from 'typescript';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: never) => Validatable;

/** apiVersion/kind → the model class and the module declaring its `I<Kind>` interface. */
const MODELS: Record<string, { model: ModelClass; module: string }> = {
  'v1/ConfigMap': { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap' },
  'v1/Namespace': { model: Namespace, module: 'kubernetes-models/v1/Namespace' },
  'v1/Secret': { model: Secret, module: 'kubernetes-models/v1/Secret' },
  'v1/Service': { model: Service, module: 'kubernetes-models/v1/Service' },
  'v1/ServiceAccount': { model: ServiceAccount, module: 'kubernetes-models/v1/ServiceAccount' },
  'apps/v1/Deployment': { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  },
  'batch/v1/Job': { model: Job, module: 'kubernetes-models/batch/v1/Job' },
  'networking.k8s.io/v1/Ingress': {
    model: Ingress,
    module: 'kubernetes-models/networking.k8s.io/v1/Ingress',
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    model: NetworkPolicy,
    module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
  },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
  },
  'rbac.authorization.k8s.io/v1/Role': {
    model: Role,
    module: 'kubernetes-models/rbac.authorization.k8s.io/v1/Role',
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': {
    model: RoleBinding,
    module: 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding',
  },
  'monitoring.coreos.com/v1/ServiceMonitor': {
    model: ServiceMonitor,
    module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
  },
};

export interface TypedObject {
  apiVersion: string;
  kind: string;
}

const key = (obj: TypedObject) => `${obj.apiVersion}/${obj.kind}`;

let fieldTypes: { checker: ts.TypeChecker; types: Map<string, ts.Type> } | undefined;

/** One program over a generated file that names every model's interface (built once, ~2 s). */
function loadFieldTypes(): { checker: ts.TypeChecker; types: Map<string, ts.Type> } {
  if (fieldTypes) return fieldTypes;
  const entries = Object.entries(MODELS);
  const file = path.resolve(import.meta.dirname, '__k8s-model-types__.ts');
  const source = [
    ...entries.map(([k, { module }], i) => {
      const kind = k.split('/').pop() ?? '';
      return `import type { I${kind} as T${i} } from '${module}';`;
    }),
    `export interface Models {`,
    ...entries.map(([k], i) => `  ${JSON.stringify(k)}: T${i};`),
    `}`,
  ].join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const base = ts.createCompilerHost(options);
  const host: ts.CompilerHost = {
    ...base,
    fileExists: (name) => name === file || base.fileExists(name),
    readFile: (name) => (name === file ? source : base.readFile(name)),
    getSourceFile: (name, version, ...rest) =>
      name === file
        ? ts.createSourceFile(name, source, version, true)
        : base.getSourceFile(name, version, ...rest),
  };
  const program = ts.createProgram([file], options, host);
  const problems = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
  if (problems.length > 0) {
    throw new Error(
      `cannot read the kubernetes-models declarations: ${ts.flattenDiagnosticMessageText(problems[0]?.messageText, '\n')}`,
    );
  }
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(file);
  const models = sf?.statements.find(ts.isInterfaceDeclaration);
  if (!models) throw new Error('generated declarations lost their Models interface');
  const types = new Map<string, ts.Type>();
  for (const prop of checker.getTypeAtLocation(models).getProperties()) {
    types.set(prop.getName(), checker.getTypeOfSymbol(prop));
  }
  fieldTypes = { checker, types };
  return fieldTypes;
}

function objectMembers(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const t = checker.getNonNullableType(type);
  const members = t.isUnion() ? t.types : [t];
  return members.filter((m) => (m.getFlags() & ts.TypeFlags.Object) !== 0);
}

function walk(checker: ts.TypeChecker, type: ts.Type, value: unknown, at: string, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  const candidates = objectMembers(checker, type);
  if (candidates.length === 0) return; // a scalar type, or any/unknown: nothing to check
  if (Array.isArray(value)) {
    const element = candidates
      .map((c) => checker.getIndexInfoOfType(c, ts.IndexKind.Number)?.type)
      .find((t) => t !== undefined);
    if (element) value.forEach((item, i) => walk(checker, element, item, `${at}[${i}]`, out));
    return;
  }
  for (const candidate of candidates) {
    const map = checker.getIndexInfoOfType(candidate, ts.IndexKind.String);
    if (map) {
      for (const [k, v] of Object.entries(value)) walk(checker, map.type, v, `${at}.${k}`, out);
      return;
    }
  }
  const known = new Map<string, ts.Symbol>();
  for (const candidate of candidates) for (const p of candidate.getProperties()) known.set(p.getName(), p);
  if (known.size === 0) return; // `{}`: free-form (e.g. a RawExtension)
  for (const [k, v] of Object.entries(value)) {
    const prop = known.get(k);
    if (!prop) out.push(`${at}.${k}`);
    else walk(checker, checker.getTypeOfSymbol(prop), v, `${at}.${k}`, out);
  }
}

/** Paths of fields the object's model does not declare (empty when none). */
export function unknownFields(obj: TypedObject): string[] {
  const { checker, types } = loadFieldTypes();
  const type = types.get(key(obj));
  if (!type) throw new Error(`no model for ${key(obj)}`);
  const out: string[] = [];
  walk(checker, type, obj, '', out);
  return out.map((p) => p.replace(/^\./, ''));
}

/** Problems with one object: no model for its kind, a schema violation, unknown fields. */
export function validateK8sObject(obj: TypedObject): string[] {
  const entry = MODELS[key(obj)];
  if (!entry) return [`no kubernetes-models model for ${key(obj)}`];
  const problems: string[] = [];
  try {
    new entry.model(obj as never).validate();
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const field of unknownFields(obj)) problems.push(`unknown field ${field}`);
  return problems;
}
