/**
 * Creates arbitrary objects (as Helm renders them) on a real API server, for
 * real or as a server-side dry run, finding each kind's resource and scope
 * through the server's own discovery documents rather than a hand-kept table.
 */
import type { K8sObject } from './helm.js';
import type { KubeApiServer } from './kube-apiserver.js';

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export interface CreateResult {
  status: number;
  body: unknown;
  /** The Status message when refused. */
  message: string;
}

export class KubeObjects {
  private readonly discovery = new Map<string, Promise<ApiResource[]>>();

  constructor(
    private readonly api: KubeApiServer,
    private readonly user = 'admin',
  ) {}

  private resources(apiVersion: string): Promise<ApiResource[]> {
    let found = this.discovery.get(apiVersion);
    if (!found) {
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      found = this.api.fetch(this.user, 'GET', base).then((res) => {
        if (res.status !== 200) throw new Error(`discovery of ${apiVersion}: HTTP ${res.status}`);
        return (res.body as { resources: ApiResource[] }).resources;
      });
      this.discovery.set(apiVersion, found);
    }
    return found;
  }

  /** Forgets discovery (after installing a CRD, its group appears). */
  reset(): void {
    this.discovery.clear();
  }

  /** The collection URL of `obj`'s kind; namespaced kinds go to metadata.namespace, else `namespace`. */
  async collection(obj: K8sObject, namespace: string): Promise<string> {
    const resource = (await this.resources(obj.apiVersion)).find(
      (r) => r.kind === obj.kind && !r.name.includes('/'),
    );
    if (!resource) throw new Error(`the API server serves no ${obj.apiVersion} ${obj.kind}`);
    const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
    return resource.namespaced
      ? `${base}/namespaces/${obj.metadata.namespace ?? namespace}/${resource.name}`
      : `${base}/${resource.name}`;
  }

  /**
   * POSTs `obj`. Strict field validation, as `kubectl apply --validate=strict`:
   * the server's default only warns about unknown or duplicate fields and drops them.
   */
  async create(obj: K8sObject, opts: { namespace: string; dryRun?: boolean }): Promise<CreateResult> {
    const query = `?fieldValidation=Strict${opts.dryRun ? '&dryRun=All' : ''}`;
    const res = await this.api.fetch(
      this.user,
      'POST',
      `${await this.collection(obj, opts.namespace)}${query}`,
      obj,
    );
    const message = (res.body as { message?: string } | undefined)?.message ?? '';
    return { ...res, message };
  }

  /** Creates for real; throws with the server's message unless it answered 201. */
  async apply(objs: K8sObject[], namespace: string): Promise<void> {
    for (const obj of objs) {
      const res = await this.create(obj, { namespace });
      if (res.status !== 201)
        throw new Error(`${obj.kind} ${obj.metadata.name}: HTTP ${res.status} ${res.message}`);
    }
  }
}
