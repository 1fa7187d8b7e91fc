import { Table, Text } from '@mantine/core';
import { formatUsd } from '../../lib/money.js';
import { groupLabel } from './chart-data.js';
import type { KeyUsage } from '../../api/types.js';
import type { Point } from './queries.js';

interface Sum {
  label: string;
  requests: number;
  errors: number;
  input: number;
  output: number;
  cost: number;
  latency?: number;
}

function sums(points: Point[]): Sum[] {
  const by = new Map<string, Sum>();
  for (const p of points) {
    const label = groupLabel(p);
    const s = by.get(label) ?? { label, requests: 0, errors: 0, input: 0, output: 0, cost: 0 };
    s.requests += p.requests ?? 0;
    s.errors += p.errors ?? 0;
    s.input += p.input_tokens ?? 0;
    s.output += p.output_tokens ?? 0;
    s.cost += p.cost_usd ?? 0;
    by.set(label, s);
  }
  return [...by.values()].sort((a, b) => b.requests - a.requests);
}

/** Totals per group over the window: from GET /virtual-keys/{id}/usage for a key (with latency), else from the series. */
export function GroupTable({
  points,
  keyUsage,
  groupTitle,
}: {
  points: Point[];
  keyUsage?: KeyUsage;
  groupTitle: string;
}) {
  const rows: Sum[] = keyUsage
    ? (keyUsage.models ?? []).map((m) => ({
        label: `${m.provider ?? '?'}/${m.model ?? '?'}`,
        requests: m.requests ?? 0,
        errors: m.errors ?? 0,
        input: m.input_tokens ?? 0,
        output: m.output_tokens ?? 0,
        cost: m.cost_usd ?? 0,
        latency: m.avg_latency_ms,
      }))
    : sums(points);
  if (!rows.length)
    return (
      <Text c="dimmed" size="sm">
        No calls in this window.
      </Text>
    );
  return (
    <Table striped aria-label={`Usage per ${groupTitle}`}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{groupTitle}</Table.Th>
          <Table.Th ta="right">Requests</Table.Th>
          <Table.Th ta="right">Errors</Table.Th>
          <Table.Th ta="right">Input tokens</Table.Th>
          <Table.Th ta="right">Output tokens</Table.Th>
          <Table.Th ta="right">Cost</Table.Th>
          {keyUsage && <Table.Th ta="right">Avg latency</Table.Th>}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.label}>
            <Table.Td>{r.label}</Table.Td>
            <Table.Td ta="right">{r.requests.toLocaleString()}</Table.Td>
            <Table.Td ta="right">{r.errors.toLocaleString()}</Table.Td>
            <Table.Td ta="right">{r.input.toLocaleString()}</Table.Td>
            <Table.Td ta="right">{r.output.toLocaleString()}</Table.Td>
            <Table.Td ta="right">{formatUsd(r.cost)}</Table.Td>
            {keyUsage && (
              <Table.Td ta="right">{r.latency === undefined ? '—' : `${Math.round(r.latency)} ms`}</Table.Td>
            )}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
