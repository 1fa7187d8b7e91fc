import { Paper, SimpleGrid, Text } from '@mantine/core';
import type { UsageSeries } from '../../api/types.js';
import { formatUsd } from '../../lib/money.js';

function Total({ label, value }: { label: string; value: string }) {
  return (
    <Paper withBorder p="sm" radius="md" role="group" aria-label={label}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={600} size="lg">
        {value}
      </Text>
    </Paper>
  );
}

/** The window's totals as cards: requests, errors, tokens and cost. */
export function UsageTotals({ totals }: { totals: NonNullable<UsageSeries['totals']> }) {
  return (
    <SimpleGrid cols={{ base: 2, md: 5 }}>
      <Total label="Requests" value={(totals.requests ?? 0).toLocaleString()} />
      <Total label="Errors" value={(totals.errors ?? 0).toLocaleString()} />
      <Total label="Input tokens" value={(totals.input_tokens ?? 0).toLocaleString()} />
      <Total label="Output tokens" value={(totals.output_tokens ?? 0).toLocaleString()} />
      <Total label="Cost" value={formatUsd(totals.cost_usd ?? 0)} />
    </SimpleGrid>
  );
}
