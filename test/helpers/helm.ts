/**
 * Helm for the chart tests: the binary `scripts/install-helm` builds (HELM_PATH,
 * else the newest ~/.cache/agent-server/helm-<version>/helm), and `helm
 * template` parsed into plain objects the way Kubernetes reads YAML (1.1).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadAll, YAML11_SCHEMA } from 'js-yaml';

const run = promisify(execFile);

export const CHART_DIR = path.resolve(import.meta.dirname, '../../deploy/helm/agent-server');

/** Kubernetes version assumed by `helm template` (the chart's kubeVersion must accept it). */
export const KUBE_VERSION = '1.33.0';

export function findHelm(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.HELM_PATH) return existsSync(env.HELM_PATH) ? env.HELM_PATH : undefined;
  const cache =
    env.AGENT_SERVER_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'agent-server');
  if (!existsSync(cache)) return undefined;
  return readdirSync(cache)
    .filter((name) => /^helm-v\d/.test(name))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((name) => path.join(cache, name, 'helm'))
    .filter((file) => existsSync(file))
    .pop();
}

export interface HelmResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

export async function helm(binary: string, args: string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(binary, args, { maxBuffer: 32 * 1024 * 1024, timeout: 60_000 });
    return { ok: true, stdout, stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface TemplateOptions {
  /** Values files, relative to the chart. */
  valuesFiles?: string[];
  /** `--set-json` entries (path=JSON). */
  setJson?: string[];
  release?: string;
  namespace?: string;
}

export function templateArgs(opts: TemplateOptions = {}): string[] {
  return [
    'template',
    opts.release ?? 'rel',
    CHART_DIR,
    '--namespace',
    opts.namespace ?? 'agents',
    '--kube-version',
    KUBE_VERSION,
    ...(opts.valuesFiles ?? []).flatMap((file) => ['--values', path.join(CHART_DIR, file)]),
    ...(opts.setJson ?? []).flatMap((entry) => ['--set-json', entry]),
  ];
}

/** Renders the chart; throws with helm's own message when it refuses. */
export async function renderChart(binary: string, opts: TemplateOptions = {}): Promise<K8sObject[]> {
  const result = await helm(binary, templateArgs(opts));
  if (!result.ok) throw new Error(`helm template failed: ${result.stderr}`);
  return parseManifests(result.stdout);
}

export function parseManifests(text: string): K8sObject[] {
  return loadAll(text, { schema: YAML11_SCHEMA }).filter(
    (doc): doc is K8sObject => doc !== null && typeof doc === 'object',
  );
}
