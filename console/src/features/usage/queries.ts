import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Item, KeySeries, KeyUsage, UsageSeries } from '../../api/types.js';

export type Point = Item<UsageSeries['buckets']>;
export type Budget = NonNullable<KeySeries['budget']>;

export type Bucket = 'hour' | 'day';
export type GroupBy = 'key' | 'model';

export interface Window {
  bucket: Bucket;
  start: string;
}

/** Usage over the window: all keys (grouped per key or model), or one key per model with its budget. */
export function useSeries(keyId: string | null, groupBy: GroupBy, w: Window) {
  return useQuery({
    queryKey: ['usage-series', keyId, groupBy, w],
    refetchInterval: 30_000,
    queryFn: () =>
      keyId
        ? unwrap<KeySeries>(
            api.GET('/api/agent-server/virtual-keys/{id}/usage/series', {
              params: {
                path: { id: keyId },
                query: { bucket: w.bucket, start_time: w.start, group_by: 'model' },
              },
            }),
          )
        : unwrap<UsageSeries>(
            api.GET('/api/agent-server/usage', {
              params: { query: { bucket: w.bucket, start_time: w.start, group_by: groupBy } },
            }),
          ),
  });
}

/** The key's spending over its current budget period, for the burn-down. */
export function useBudgetSeries(keyId: string, budget: Budget | null | undefined) {
  const w = budget ? budgetWindow(budget) : undefined;
  return useQuery({
    queryKey: ['usage-budget', keyId, w],
    enabled: !!w,
    refetchInterval: 30_000,
    queryFn: () =>
      unwrap<KeySeries>(
        api.GET('/api/agent-server/virtual-keys/{id}/usage/series', {
          params: { path: { id: keyId }, query: { bucket: w!.bucket, start_time: w!.start } },
        }),
      ),
  });
}

/** Hourly for a daily budget, daily otherwise; at most 744 buckets back. */
export function budgetWindow(b: Budget): Window {
  const bucket: Bucket = b.period === 'day' ? 'hour' : 'day';
  const floor = Date.now() - 700 * 24 * 3600_000;
  const start = Math.max(Date.parse(b.period_start ?? new Date().toISOString()), floor);
  return { bucket, start: new Date(start).toISOString() };
}

/** Totals and per-model rows (with latency) of one key over the window. */
export function useKeyUsage(keyId: string | null, start: string) {
  return useQuery({
    queryKey: ['usage-key', keyId, start],
    enabled: !!keyId,
    refetchInterval: 30_000,
    queryFn: () =>
      unwrap<KeyUsage>(
        api.GET('/api/agent-server/virtual-keys/{id}/usage', {
          params: { path: { id: keyId! }, query: { start_time: start } },
        }),
      ),
  });
}
