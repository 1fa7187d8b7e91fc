import type { Db } from '../db/knex.js';

export type UsageBucket = 'hour' | 'day';
export type UsageGroupBy = 'key' | 'model' | 'provider';

/** Which gateway_usage rows a series counts, and how it cuts them. */
export interface UsageSeriesQuery {
  bucket: UsageBucket;
  /** Aligned to a bucket start (UTC). */
  start: Date;
  /** Exclusive. */
  end: Date;
  virtualKeyId?: string;
  model?: string;
  /** Provider name, as usage rows record it. */
  provider?: string;
  groupBy?: UsageGroupBy;
  /** Groups beyond this many (by requests) are left out; `group_count` says how many there were. */
  maxGroups: number;
}

export interface UsageSums {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}

export interface UsageSeriesRow extends UsageSums {
  bucket_start: Date;
  /** Null for the calls no key metered (agent turns of projects without a virtual key). */
  virtual_key_id?: string | null;
  virtual_key_name?: string | null;
  provider?: string;
  model?: string;
  /** How many groups had usage in the window (the same on every row). */
  group_count: number;
}

const GROUP_COLUMNS: Record<UsageGroupBy, Array<[column: string, as: string]>> = {
  key: [['virtual_key_id', 'virtual_key_id']],
  model: [
    ['provider_name', 'provider'],
    ['model', 'model'],
  ],
  provider: [['provider_name', 'provider']],
};

const SUMS = `count(*)::int as requests,
  count(*) filter (where status >= 400)::int as errors,
  coalesce(sum(input_tokens), 0)::float8 as input_tokens,
  coalesce(sum(output_tokens), 0)::float8 as output_tokens,
  coalesce(sum(cache_read_tokens), 0)::float8 as cache_read_tokens,
  coalesce(sum(cache_write_tokens), 0)::float8 as cache_write_tokens,
  coalesce(sum(cost_usd), 0)::float8 as cost_usd`;

/**
 * Gateway usage as time series: sums per UTC hour or day (and per key,
 * model or provider), every bucket of the window present, zeros where no
 * call was made. Per key, the calls no key metered are one group of their
 * own (a null key). Knex only.
 */
export class UsageSeriesRepository {
  constructor(private readonly db: Db) {}

  private where(q: UsageSeriesQuery): { sql: string; args: Record<string, unknown> } {
    const parts = ['created_at >= :start', 'created_at < :end'];
    if (q.virtualKeyId !== undefined) parts.push('virtual_key_id = :key');
    if (q.model !== undefined) parts.push('model = :model');
    if (q.provider !== undefined) parts.push('provider_name = :provider');
    return {
      sql: parts.join(' and '),
      args: {
        start: q.start,
        end: q.end,
        key: q.virtualKeyId ?? null,
        model: q.model ?? null,
        provider: q.provider ?? null,
      },
    };
  }

  /** One row per bucket (per group, for the `maxGroups` groups with most requests), oldest first. */
  async series(q: UsageSeriesQuery): Promise<UsageSeriesRow[]> {
    const where = this.where(q);
    const cols = q.groupBy ? GROUP_COLUMNS[q.groupBy] : [];
    const inner = cols.map(([c, as]) => `${c} as ${as}`);
    const names = cols.map(([, as]) => as);
    // Buckets are UTC hours or days; generate_series over `timestamp` (no time zone) steps without DST
    // surprises. Ungrouped, `g` is one row (an aggregate over all of `u`), so every bucket comes back.
    const { rows } = await this.db.raw<{ rows: UsageSeriesRow[] }>(
      `with u as (
         select date_trunc(:unit, created_at at time zone 'UTC') as b, ${[...inner, SUMS].join(', ')}
           from gateway_usage
          where ${where.sql}
          group by ${['1', ...names].join(', ')}
       ), g as (
         select ${names.length ? `${names.join(', ')},` : ''}
                row_number() over (order by sum(requests) desc${names.length ? `, ${names.join(', ')}` : ''}) as rank,
                count(*) over () as group_count
           from u ${names.length ? `group by ${names.join(', ')}` : ''}
       ), gs as (
         select * from g where rank <= :max_groups
       ), b as (
         select generate_series(:start::timestamptz at time zone 'UTC',
                                (:end::timestamptz at time zone 'UTC') - interval '1 microsecond',
                                :step::interval) as b
       )
       select b.b at time zone 'UTC' as bucket_start,
              ${names.map((n) => `gs.${n}, `).join('')}
              ${q.groupBy === 'key' ? 'vk.name as virtual_key_name,' : ''}
              coalesce(u.requests, 0) as requests, coalesce(u.errors, 0) as errors,
              coalesce(u.input_tokens, 0) as input_tokens, coalesce(u.output_tokens, 0) as output_tokens,
              coalesce(u.cache_read_tokens, 0) as cache_read_tokens,
              coalesce(u.cache_write_tokens, 0) as cache_write_tokens,
              coalesce(u.cost_usd, 0) as cost_usd,
              gs.group_count::int as group_count
         from b cross join gs
         left join u on u.b = b.b ${names.map((n) => `and u.${n} is not distinct from gs.${n}`).join(' ')}
         ${q.groupBy === 'key' ? 'left join virtual_keys vk on vk.id = gs.virtual_key_id' : ''}
        order by b.b, gs.rank`,
      {
        ...where.args,
        unit: q.bucket,
        step: `1 ${q.bucket}`,
        max_groups: q.maxGroups,
      },
    );
    return rows;
  }

  /** The sums over the whole window (every group, also those a series leaves out). */
  async totals(q: UsageSeriesQuery): Promise<UsageSums> {
    const where = this.where(q);
    const { rows } = await this.db.raw<{ rows: UsageSums[] }>(
      `select ${SUMS} from gateway_usage where ${where.sql}`,
      where.args,
    );
    return rows[0]!;
  }
}
