/**
 * A project's long-term memory store, as both its doors use it: the Agent
 * Protocol's `/store` routes and the agents' memory tools. Items are JSON
 * objects under a namespace path and a key; an item may expire (`ttl` in
 * minutes, pushed forward by reads that ask for it). With a store embedding
 * model set on the project, a put embeds what it indexes and a search with a
 * query ranks by cosine similarity (`score`); without one, a query keeps the
 * items whose strings contain it, case-insensitively.
 */
import { ProjectsRepository } from '../repositories/projects.repository.js';
import {
  MemoryStoreRepository,
  type FieldCondition,
  type NamespaceListing,
  type StoreItemRow,
} from '../repositories/memory-store.repository.js';
import { embedTexts, type EmbedCaller, type EmbedDeps, type StoreEmbedding } from './embedder.js';
import { indexedText } from './index-text.js';

export interface PutItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  /** false: not embedded; a list: these fields; absent or null: the project's default fields. */
  index?: false | string[] | null;
  /** Minutes to live; absent or null: for ever. */
  ttl?: number | null;
}

export interface SearchItems {
  prefix: string[];
  conditions?: Array<{ field: string; condition: FieldCondition }>;
  limit: number;
  offset: number;
  query?: string;
  refreshTtl?: boolean;
}

/** The session a memory tool call serves, for the embedding call's span. */
export type StoreSession = EmbedCaller['session'];

export class MemoryStore {
  private readonly items: MemoryStoreRepository;

  constructor(
    private readonly deps: EmbedDeps,
    private readonly session?: StoreSession,
  ) {
    this.items = new MemoryStoreRepository(deps.db);
  }

  /** The project's key and store embedding setting (undefined setting: none). */
  private async project(projectId: string): Promise<{ caller: EmbedCaller; embedding?: StoreEmbedding }> {
    const p = await new ProjectsRepository(this.deps.db).findById(projectId);
    const caller: EmbedCaller = {
      projectId,
      virtualKeyId: p?.virtual_key_id ?? null,
      ...(this.session ? { session: this.session } : {}),
    };
    if (!p?.store_embedding_model_id) return { caller };
    return {
      caller,
      embedding: {
        modelId: p.store_embedding_model_id,
        dims: p.store_embedding_dims,
        fields: p.store_embedding_fields,
      },
    };
  }

  async put(projectId: string, item: PutItem): Promise<void> {
    let embedding: number[] | null = null;
    if (item.index !== false) {
      const { caller, embedding: setting } = await this.project(projectId);
      const text = setting ? indexedText(item.value, item.index ?? setting.fields) : '';
      if (setting && text !== '')
        embedding = (await embedTexts(this.deps, caller, setting, [text]))[0] ?? null;
    }
    await this.items.put(projectId, {
      namespace: item.namespace,
      key: item.key,
      value: item.value,
      embedding,
      ttlMinutes: item.ttl ?? null,
    });
  }

  get(
    projectId: string,
    namespace: string[],
    key: string,
    refreshTtl = true,
  ): Promise<StoreItemRow | undefined> {
    return this.items.get(projectId, namespace, key, refreshTtl);
  }

  delete(projectId: string, namespace: string[], key: string): Promise<boolean> {
    return this.items.delete(projectId, namespace, key);
  }

  /** Items under the prefix; a query ranks them by meaning (with an embedding model) or keeps those containing it. */
  async search(projectId: string, s: SearchItems): Promise<StoreItemRow[]> {
    let query: { vector: number[] } | { text: string } | undefined;
    if (s.query !== undefined && s.query !== '') {
      const { caller, embedding } = await this.project(projectId);
      if (embedding) {
        const [vector] = await embedTexts(this.deps, caller, embedding, [s.query]);
        query = { vector: vector! };
      } else query = { text: s.query };
    }
    return this.items.search(projectId, {
      prefix: s.prefix,
      conditions: s.conditions ?? [],
      limit: s.limit,
      offset: s.offset,
      ...(query ? { query } : {}),
      refreshTtl: s.refreshTtl ?? true,
    });
  }

  listNamespaces(projectId: string, l: NamespaceListing): Promise<string[][]> {
    return this.items.listNamespaces(projectId, l);
  }
}
