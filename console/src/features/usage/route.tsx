import '@mantine/charts/styles.css';
import { Group, Paper, SegmentedControl, Select, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { BurnDown, UsageCharts } from './charts.js';
import type { KeySeries } from '../../api/types.js';
import { useVirtualKeys } from '../config/keys/queries.js';
import { GroupTable } from './model-table.js';
import {
  useBudgetSeries,
  useKeyUsage,
  useSeries,
  type Bucket,
  type GroupBy,
  type Window,
} from './queries.js';
import { RunsBySource } from './run-stats.js';
import { UsageTotals } from './totals.js';

const RANGES: Record<string, { label: string; bucket: Bucket; hours: number }> = {
  '24h': { label: '24 hours', bucket: 'hour', hours: 24 },
  '7d': { label: '7 days', bucket: 'hour', hours: 24 * 7 },
  '30d': { label: '30 days', bucket: 'day', hours: 24 * 30 },
};

/** The window's start, rounded down to its bucket so the query key stays put between renders. */
function windowOf(range: string): Window {
  const r = RANGES[range] ?? RANGES['24h']!;
  const unit = r.bucket === 'hour' ? 3600_000 : 24 * 3600_000;
  const now = Math.floor(Date.now() / unit) * unit;
  return { bucket: r.bucket, start: new Date(now - (r.hours / (unit / 3600_000) - 1) * unit).toISOString() };
}

function Budget({ keyId, series }: { keyId: string; series: KeySeries }) {
  const budget = series.budget;
  const burn = useBudgetSeries(keyId, budget);
  if (!budget)
    return (
      <Text size="sm" c="dimmed">
        This key has no budget: set one in Configuration → Virtual keys to see its burn-down.
      </Text>
    );
  if (burn.isLoading) return <Loading what="Loading the budget period" />;
  if (burn.error) return <ErrorAlert error={burn.error} />;
  return <BurnDown points={burn.data?.buckets ?? []} budget={budget} bucket={burn.data?.bucket ?? 'day'} />;
}

/**
 * Model calls per virtual key (agent turns without one under "no key") and
 * per model: requests, tokens and cost over time, and a key's budget.
 */
export function Component() {
  const [params, setParams] = useSearchParams();
  const keyId = params.get('key');
  const range = params.get('range') ?? '24h';
  const groupBy = (keyId ? 'model' : (params.get('group') ?? 'key')) as GroupBy;
  const w = useMemo(() => windowOf(range), [range]);
  const keys = useVirtualKeys();
  const series = useSeries(keyId, groupBy, w);
  const keyUsage = useKeyUsage(keyId, w.start);
  const set = (k: string, v: string | null) =>
    setParams(
      (old) => {
        const next = new URLSearchParams(old);
        if (v) next.set(k, v);
        else next.delete(k);
        return next;
      },
      { replace: true },
    );
  const totals = series.data?.totals;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <Title order={3}>Usage</Title>
        <Group align="flex-end">
          <Select
            label="Virtual key"
            placeholder="All keys"
            clearable
            data={(keys.data ?? []).map((k) => ({ value: k.id, label: `${k.name} (${k.key_prefix}…)` }))}
            value={keyId}
            onChange={(v) => set('key', v)}
            w={260}
          />
          <SegmentedControl
            aria-label="Group by"
            disabled={!!keyId}
            value={groupBy}
            onChange={(v) => set('group', v)}
            data={[
              { value: 'key', label: 'Per key' },
              { value: 'model', label: 'Per model' },
            ]}
          />
          <SegmentedControl
            aria-label="Time range"
            value={range}
            onChange={(v) => set('range', v)}
            data={Object.entries(RANGES).map(([value, r]) => ({ value, label: r.label }))}
          />
        </Group>
      </Group>
      {series.isLoading && <Loading what="Loading usage" />}
      <ErrorAlert error={series.error ?? keys.error} />
      {keys.data?.length === 0 && totals?.requests === 0 && (
        <Empty title="No virtual key yet">
          Agents' turns are counted here under &quot;no key&quot;; gateway calls need a virtual key. Create
          one in Configuration → Virtual keys and call the gateway with it (or give it to a project to limit
          its agents).
        </Empty>
      )}
      {totals && <UsageTotals totals={totals} />}
      {series.data && totals?.requests === 0 && (
        <Empty title="No calls in this window">
          Call the gateway with a virtual key (for OpenAI SDKs, base URL {location.origin}
          /api/gateway/openai/v1) or converse with an agent (a project without a virtual key counts under
          &quot;no key&quot;); usage shows up here within a minute.
        </Empty>
      )}
      {series.data && (totals?.requests ?? 0) > 0 && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <UsageCharts points={series.data.buckets} bucket={series.data.bucket} />
          {keyId && <Budget keyId={keyId} series={series.data as KeySeries} />}
        </SimpleGrid>
      )}
      {keyId && series.data && (totals?.requests ?? 0) === 0 && (
        <Budget keyId={keyId} series={series.data as KeySeries} />
      )}
      {series.data && (totals?.requests ?? 0) > 0 && (
        <Paper withBorder p="md" radius="md">
          <Title order={5} mb="sm">
            {keyId || groupBy === 'model' ? 'Per model' : 'Per key'}
          </Title>
          <GroupTable
            points={series.data.buckets}
            keyUsage={keyId ? keyUsage.data : undefined}
            groupTitle={keyId || groupBy === 'model' ? 'Model' : 'Virtual key'}
          />
          {(series.data.groups_omitted ?? 0) > 0 && (
            <Text size="xs" c="dimmed" mt="xs">
              {series.data.groups_omitted} more groups with fewer calls are left out.
            </Text>
          )}
        </Paper>
      )}
      <RunsBySource start={w.start} />
    </Stack>
  );
}
