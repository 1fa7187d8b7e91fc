import type { Db } from '../../core/db/knex.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { MeteringRepository, type BudgetPeriod } from '../../core/repositories/metering.repository.js';
import {
  UsageSeriesRepository,
  type UsageBucket,
  type UsageSeriesRow,
  type UsageSums,
} from '../../core/repositories/usage-series.repository.js';
import { VirtualKeysRepository } from '../../core/repositories/virtual-keys.repository.js';
import type { UsageSeriesQuery } from '../schemas/usage.schemas.js';

const STEP_MS: Record<UsageBucket, number> = { hour: 3_600_000, day: 86_400_000 };
/** Without `start_time`: the last 24 hours by the hour, the last 30 days by the day (the current one included). */
const DEFAULT_BUCKETS: Record<UsageBucket, number> = { hour: 24, day: 30 };
/** A month of hours, two years of days: a chart's worth, and a bounded answer. */
export const MAX_BUCKETS = 744;
/** Grouped series keep the groups with most requests. */
export const MAX_GROUPS = 20;

const money = (usd: number) => Math.round(Number(usd) * 1e8) / 1e8;

/**
 * The window of a series: `start_time` rounded down to its bucket (UTC hours
 * and days are whole multiples of the epoch), `end_time` exclusive. Too many
 * buckets, or an empty window, is the caller's mistake (400 naming `start_time`).
 */
export function seriesWindow(
  bucket: UsageBucket,
  startTime: Date | undefined,
  endTime: Date | undefined,
): { start: Date; end: Date } {
  const step = STEP_MS[bucket];
  const floor = (ms: number) => Math.floor(ms / step) * step;
  const end = endTime ?? new Date();
  if (startTime && startTime >= end)
    throw ValidationError.field('start_time', 'start_time must be before end_time', 'date.max');
  const start = new Date(
    startTime ? floor(startTime.getTime()) : floor(end.getTime() - 1) - (DEFAULT_BUCKETS[bucket] - 1) * step,
  );
  const buckets = Math.ceil((end.getTime() - start.getTime()) / step);
  if (buckets > MAX_BUCKETS)
    throw ValidationError.field(
      'start_time',
      `the window holds ${buckets} ${bucket} buckets, more than ${MAX_BUCKETS}: choose a later start_time, an earlier end_time or a longer bucket`,
      'number.max',
    );
  return { start, end };
}

function sums(row: UsageSums): UsageSums {
  return {
    requests: Number(row.requests),
    errors: Number(row.errors),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    cost_usd: money(row.cost_usd),
  };
}

function point(row: UsageSeriesRow, groupBy: UsageSeriesQuery['group_by']) {
  return {
    bucket_start: row.bucket_start.toISOString(),
    ...(groupBy === 'key'
      ? { virtual_key_id: row.virtual_key_id, virtual_key_name: row.virtual_key_name }
      : {}),
    ...(groupBy === 'model' || groupBy === 'provider' ? { provider: row.provider } : {}),
    ...(groupBy === 'model' ? { model: row.model } : {}),
    ...sums(row),
  };
}

/** Gateway usage as time series, across keys or for one key with its budget. */
export class UsageService {
  private readonly series: UsageSeriesRepository;

  constructor(
    private readonly db: Db,
    /** Writes this replica's queued usage rows first, so a call just made is counted. */
    private readonly flush: () => Promise<void>,
  ) {
    this.series = new UsageSeriesRepository(db);
  }

  /** A virtual key's calls from `start` (inclusive) to `end`: totals, and the same sums by provider and model. */
  async keyUsage(keyId: string, start: Date, end: Date) {
    await this.flush();
    const { totals, models } = await new MeteringRepository(this.db).usage(keyId, start, end);
    return { start_time: start.toISOString(), end_time: end.toISOString(), totals, models };
  }

  async timeSeries(q: UsageSeriesQuery) {
    const { start, end } = seriesWindow(q.bucket, q.start_time, q.end_time);
    await this.flush();
    const query = {
      bucket: q.bucket,
      start,
      end,
      maxGroups: MAX_GROUPS,
      ...(q.virtual_key_id ? { virtualKeyId: q.virtual_key_id } : {}),
      ...(q.model ? { model: q.model } : {}),
      ...(q.provider ? { provider: q.provider } : {}),
      ...(q.group_by ? { groupBy: q.group_by } : {}),
    };
    const [rows, totals] = await Promise.all([this.series.series(query), this.series.totals(query)]);
    const groups = q.group_by ? (rows[0]?.group_count ?? 0) : 0;
    return {
      bucket: q.bucket,
      start_time: start.toISOString(),
      end_time: end.toISOString(),
      group_by: q.group_by ?? null,
      buckets: rows.map((r) => point(r, q.group_by)),
      totals: sums(totals),
      groups_omitted: Math.max(0, groups - MAX_GROUPS),
    };
  }

  /** Where the key's budget stands in its current period, as the gateway counts it. */
  private async budget(keyId: string, budget: { max_usd: number; period: BudgetPeriod }) {
    const period = await new MeteringRepository(this.db).budgetPeriod(keyId, budget.period);
    const spent = money(period.spent_usd);
    const reserved = money(period.reserved_usd);
    return {
      max_usd: budget.max_usd,
      period: budget.period,
      period_start: period.period_start.toISOString(),
      period_end: period.period_end ? period.period_end.toISOString() : null,
      spent_usd: spent,
      reserved_usd: reserved,
      remaining_usd: money(Math.max(0, budget.max_usd - spent - reserved)),
    };
  }

  /** One key's series (a deleted key's too: its usage is kept), with its budget's current period. */
  async keySeries(keyId: string, q: Omit<UsageSeriesQuery, 'virtual_key_id'>) {
    const key = await new VirtualKeysRepository(this.db).findIncludingDeleted(keyId);
    if (!key) throw new NotFoundError('virtual key');
    const series = await this.timeSeries({ ...q, virtual_key_id: keyId });
    const budget = key.budget ? await this.budget(keyId, key.budget) : null;
    return {
      ...series,
      virtual_key: { id: key.id, name: key.name, deleted: key.deleted_at !== null },
      budget,
    };
  }
}
