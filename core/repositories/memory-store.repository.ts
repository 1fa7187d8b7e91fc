import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { deleteInChunks } from '../db/prune.js';
import { StoreItemsTableName } from '../db/tables/store-items.js';

/** An item as readers see it (search adds its `score`). */
export interface StoreItemRow {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  score?: number | null;
}

export interface StoreItemWrite {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  embedding: number[] | null;
  ttlMinutes: number | null;
}

/** One condition on a top-level field of the value (the Agent Protocol's `filter`). */
export type FieldCondition =
  | { op: '$eq' | '$ne'; value: unknown }
  | { op: '$gt' | '$gte' | '$lt' | '$lte'; value: number | string }
  | { op: '$in' | '$nin'; value: unknown[] };

export interface StoreSearch {
  prefix: string[];
  conditions: Array<{ field: string; condition: FieldCondition }>;
  limit: number;
  offset: number;
  /** Rank by cosine similarity to this vector, or keep items whose strings contain this text. */
  query?: { vector: number[] } | { text: string };
  refreshTtl: boolean;
}

export interface NamespaceListing {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
}

const LIVE = '(expires_at is null or expires_at > now())';
const COMPARE = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** Whether the database has pgvector, asked once per pool (the extension is created by an operator, not by us). */
const pgvectorOf = new WeakMap<Db, Promise<boolean>>();

/** `%`, `_` and `\` taken literally in ILIKE. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The project's memory store (the Agent Protocol's `/store`, the agents'
 * memory tools). Embeddings are `float8[]`; a semantic search ranks by
 * cosine similarity with pgvector's `<=>` where the database has the
 * extension and with the same formula in plain SQL where it has not: an
 * exact search either way (docs/memory-store.md says how to index it).
 */
export class MemoryStoreRepository {
  constructor(private readonly db: Db) {}

  /** Detected once per pool: `vector` among the database's installed extensions. */
  hasPgvector(): Promise<boolean> {
    let found = pgvectorOf.get(this.db);
    if (!found) {
      found = this.db
        .raw<{ rows: Array<{ found: boolean }> }>(
          "select exists (select 1 from pg_extension where extname = 'vector') as found",
        )
        .then((r) => Boolean(r.rows[0]?.found));
      pgvectorOf.set(this.db, found);
    }
    return found;
  }

  /** Writes the item (a put over an expired item starts a new one: a new `created_at`). */
  async put(projectId: string, item: StoreItemWrite): Promise<void> {
    const ttl = item.ttlMinutes;
    await this.db.raw(
      `insert into store_items as s (project_id, namespace, key, value, embedding, ttl_minutes, expires_at)
       values (?, ?::text[], ?, ?::jsonb, ?::float8[], ?::float8,
               case when ?::float8 is null then null else now() + ?::float8 * interval '1 minute' end)
       on conflict (project_id, namespace, key) do update
          set value = excluded.value, embedding = excluded.embedding, ttl_minutes = excluded.ttl_minutes,
              expires_at = excluded.expires_at, updated_at = now(),
              created_at = case when s.expires_at <= now() then now() else s.created_at end`,
      [projectId, item.namespace, item.key, JSON.stringify(item.value), item.embedding, ttl, ttl, ttl],
    );
  }

  /** The live item, its expiry pushed forward by its TTL when `refreshTtl`. */
  async get(
    projectId: string,
    namespace: string[],
    key: string,
    refreshTtl: boolean,
  ): Promise<StoreItemRow | undefined> {
    const { rows } = await this.db.raw<{ rows: StoreItemRow[] }>(
      `with hit as (
         select namespace, key, value, created_at, updated_at from store_items
          where project_id = ? and namespace = ?::text[] and key = ? and ${LIVE}),
       touched as (
         update store_items s set expires_at = now() + s.ttl_minutes * interval '1 minute'
           from hit where ?::boolean and s.ttl_minutes is not null
            and s.project_id = ? and s.namespace = hit.namespace and s.key = hit.key)
       select * from hit`,
      [projectId, namespace, key, refreshTtl, projectId],
    );
    return rows[0];
  }

  /** Deletes the item; whether there was one (live or not). */
  async delete(projectId: string, namespace: string[], key: string): Promise<boolean> {
    const n = await this.db(StoreItemsTableName)
      .where({ project_id: projectId, key })
      .whereRaw('namespace = ?::text[]', [namespace])
      .delete();
    return n > 0;
  }

  /**
   * Live items under the prefix that meet every condition, ranked by
   * similarity to `query.vector` (items without an embedding last, unscored),
   * or newest first; each returned item's TTL refreshed when asked.
   */
  async search(projectId: string, s: StoreSearch): Promise<StoreItemRow[]> {
    const where: string[] = ['project_id = ?', LIVE];
    const bindings: Knex.RawBinding[] = [projectId];
    if (s.prefix.length) {
      where.push(
        `cardinality(namespace) >= ${s.prefix.length} and namespace[1:${s.prefix.length}] = ?::text[]`,
      );
      bindings.push(s.prefix);
    }
    for (const { field, condition } of s.conditions) {
      const [sql, values] = conditionSql(field, condition);
      where.push(sql);
      bindings.push(...values);
    }
    const [scoreSql, scoreBindings] = await this.scoreSql(s.query);
    if (s.query && 'text' in s.query) {
      where.push(
        // `\\?` is a literal `?` for Knex (a jsonpath filter), not a binding.
        `exists (select 1 from jsonb_path_query(value, 'strict $.** \\? (@.type() == "string")') t
                  where t #>> '{}' ilike ?)`,
      );
      bindings.push(`%${likeLiteral(s.query.text)}%`);
    }
    const { rows } = await this.db.raw<{ rows: StoreItemRow[] }>(
      `with found as (
         select namespace, key, value, created_at, updated_at, score,
                row_number() over (order by score desc nulls last, updated_at desc, namespace, key) as rank
           from (select *, ${scoreSql} as score from store_items where ${where.join(' and ')}) i
          order by rank limit ? offset ?),
       touched as (
         update store_items s set expires_at = now() + s.ttl_minutes * interval '1 minute'
           from found where ?::boolean and s.ttl_minutes is not null
            and s.project_id = ? and s.namespace = found.namespace and s.key = found.key)
       select namespace, key, value, created_at, updated_at, score from found order by rank`,
      [...scoreBindings, ...bindings, s.limit, s.offset, s.refreshTtl, projectId],
    );
    return rows;
  }

  /** Cosine similarity to the query's vector (null for an item without one, or of another length). */
  private async scoreSql(query: StoreSearch['query']): Promise<[string, Knex.RawBinding[]]> {
    if (!query || !('vector' in query)) return ['null::float8', []];
    const v = query.vector;
    if (await this.hasPgvector())
      return [
        `case when cardinality(embedding) = ? then 1 - (embedding::vector <=> ?::vector) end`,
        [v.length, `[${v.join(',')}]`],
      ];
    return [
      `case when cardinality(embedding) = ? then
         (select sum(a * b) / nullif(sqrt(sum(a * a)) * sqrt(sum(b * b)), 0)
            from unnest(embedding, ?::float8[]) as t(a, b)) end`,
      [v.length, v],
    ];
  }

  /** Distinct namespaces of live items (cut to `maxDepth`), matching a prefix and a suffix where `*` is any label. */
  async listNamespaces(projectId: string, l: NamespaceListing): Promise<string[][]> {
    const where: string[] = ['project_id = ?', LIVE];
    const bindings: Knex.RawBinding[] = [projectId];
    const match = (labels: string[] | undefined, at: (i: number) => string) => {
      if (!labels?.length) return;
      where.push(`cardinality(namespace) >= ${labels.length}`);
      labels.forEach((label, i) => {
        if (label === '*') return;
        where.push(`namespace[${at(i)}] = ?`);
        bindings.push(label);
      });
    };
    match(l.prefix, (i) => String(i + 1));
    match(l.suffix, (i) => `cardinality(namespace) - ${l.suffix!.length - 1 - i}`);
    const ns = l.maxDepth !== undefined ? `namespace[1:${l.maxDepth}]` : 'namespace';
    const { rows } = await this.db.raw<{ rows: Array<{ ns: string[] }> }>(
      `select distinct ${ns} as ns from store_items where ${where.join(' and ')} order by ns limit ? offset ?`,
      [...bindings, l.limit, l.offset],
    );
    return rows.map((r) => r.ns);
  }

  /** Housekeeping: deletes items whose time to live has passed (one replica at a time, in chunks); how many. */
  pruneExpired(chunk = 10_000): Promise<number> {
    return deleteInChunks(
      this.db,
      'agent-server:prune-store-items',
      `delete from store_items where ctid in (
         select ctid from store_items where expires_at <= now() limit ?)`,
      [],
      chunk,
    );
  }

  /** Tests and operators: sets an item's expiry (e.g. in the past, to see it expire without waiting). */
  async setExpiry(projectId: string, namespace: string[], key: string, at: Date): Promise<void> {
    await this.db(StoreItemsTableName)
      .where({ project_id: projectId, key })
      .whereRaw('namespace = ?::text[]', [namespace])
      .update({ expires_at: at } as never);
  }
}

/** One field condition as SQL on `value -> field` (jsonb equality for `$eq`/`$ne`/`$in`/`$nin`). */
function conditionSql(field: string, c: FieldCondition): [string, Knex.RawBinding[]] {
  switch (c.op) {
    case '$eq':
      return ['value -> ? = ?::jsonb', [field, JSON.stringify(c.value)]];
    case '$ne':
      return ['value -> ? is distinct from ?::jsonb', [field, JSON.stringify(c.value)]];
    case '$in':
      return ['value -> ? in (select jsonb_array_elements(?::jsonb))', [field, JSON.stringify(c.value)]];
    case '$nin':
      return [
        'not coalesce(value -> ? in (select jsonb_array_elements(?::jsonb)), false)',
        [field, JSON.stringify(c.value)],
      ];
    default: {
      const op = COMPARE[c.op];
      if (typeof c.value === 'number')
        return [
          `(jsonb_typeof(value -> ?) = 'number' and (value ->> ?)::numeric ${op} ?)`,
          [field, field, c.value],
        ];
      return [`(jsonb_typeof(value -> ?) = 'string' and value ->> ? ${op} ?)`, [field, field, c.value]];
    }
  }
}
