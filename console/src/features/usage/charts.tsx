import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Paper, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { formatUsd } from '../../lib/money.js';
import { burnDown, toChart } from './chart-data.js';
import type { Budget, Point } from './queries.js';

const usd = (n: number) => formatUsd(n);
const int = (n: number) => n.toLocaleString();

function Panel({ title, hint, children }: { title: string; hint: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" radius="md" role="figure" aria-label={title}>
      <Title order={5}>{title}</Title>
      <Text size="xs" c="dimmed" mb="sm">
        {hint}
      </Text>
      {children}
    </Paper>
  );
}

/** Requests, tokens and cost per bucket, one stacked series per key or model. */
export function UsageCharts({ points, bucket }: { points: Point[]; bucket: 'hour' | 'day' }) {
  const requests = toChart(points, 'requests', bucket);
  const tokens = toChart(points, 'tokens', bucket);
  const cost = toChart(points, 'cost_usd', bucket);
  const common = {
    h: 220,
    dataKey: 'time',
    withLegend: true,
    tickLine: 'y' as const,
    legendProps: { height: 40 },
  };
  return (
    <>
      <Panel title="Requests" hint={`Calls per ${bucket}, errors included`}>
        <BarChart
          {...common}
          data={requests.data}
          series={requests.series}
          type="stacked"
          valueFormatter={int}
        />
      </Panel>
      <Panel title="Tokens" hint={`Input plus output tokens per ${bucket}`}>
        <AreaChart
          {...common}
          data={tokens.data}
          series={tokens.series}
          type="stacked"
          valueFormatter={int}
        />
      </Panel>
      <Panel title="Cost" hint={`USD per ${bucket}, as the gateway priced each call`}>
        <LineChart
          {...common}
          data={cost.data}
          series={cost.series}
          valueFormatter={usd}
          curveType="linear"
        />
      </Panel>
    </>
  );
}

/** What is left of the key's budget this period, against spending it evenly. */
export function BurnDown({
  points,
  budget,
  bucket,
}: {
  points: Point[];
  budget: Budget;
  bucket: 'hour' | 'day';
}) {
  const data = burnDown(points, budget, bucket);
  const series = [
    { name: 'remaining', label: 'Remaining', color: 'teal.6' },
    ...(budget.period_end ? [{ name: 'even', label: 'Even spending', color: 'gray.5' }] : []),
  ];
  return (
    <Panel
      title="Budget burn-down"
      hint={`${usd(budget.max_usd ?? 0)} per ${budget.period}; spent ${usd(budget.spent_usd ?? 0)}, reserved by calls in flight ${usd(budget.reserved_usd ?? 0)}, remaining ${usd(budget.remaining_usd ?? 0)}`}
    >
      <LineChart
        h={220}
        dataKey="time"
        data={data}
        series={series}
        withLegend
        valueFormatter={usd}
        yAxisProps={{ domain: [0, budget.max_usd ?? 'auto'] }}
        referenceLines={[{ y: 0, color: 'red.6' }]}
        curveType="stepAfter"
      />
    </Panel>
  );
}
