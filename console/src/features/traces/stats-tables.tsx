import { Badge, Table, Text } from '@mantine/core';
import { fmtCost, fmtDuration, fmtInt, fmtPercent } from '../sessions/format.js';
import type { EndpointStat, ModelStat, ServiceStat } from '../../api/types.js';
import { ServiceDot } from './service-dot.js';

function Service({ name }: { name: string | undefined }) {
  return (
    <Text size="sm" span style={{ whiteSpace: 'nowrap' }}>
      <ServiceDot service={name} style={{ marginRight: 6 }} />
      {name}
    </Text>
  );
}

function ErrorRate({ rate, count }: { rate: number | undefined; count: number | undefined }) {
  if (!count)
    return (
      <Text size="sm" c="dimmed">
        0
      </Text>
    );
  return (
    <Badge color="red" variant="light">
      {fmtInt(count)} ({fmtPercent(rate)})
    </Badge>
  );
}

const LatencyHead = () => (
  <>
    <Table.Th ta="right">Calls</Table.Th>
    <Table.Th ta="right">Errors</Table.Th>
    <Table.Th ta="right">Avg</Table.Th>
    <Table.Th ta="right">p50</Table.Th>
    <Table.Th ta="right">p95</Table.Th>
    <Table.Th ta="right">p99</Table.Th>
    <Table.Th ta="right">Max</Table.Th>
  </>
);

function LatencyCells({ r }: { r: EndpointStat | ServiceStat }) {
  return (
    <>
      <Table.Td ta="right">{fmtInt(r.call_count)}</Table.Td>
      <Table.Td ta="right">
        <ErrorRate rate={r.error_rate} count={r.error_count} />
      </Table.Td>
      <Table.Td ta="right">{fmtDuration(r.avg_ms)}</Table.Td>
      <Table.Td ta="right">{fmtDuration(r.p50_ms)}</Table.Td>
      <Table.Td ta="right">{fmtDuration(r.p95_ms)}</Table.Td>
      <Table.Td ta="right">{fmtDuration(r.p99_ms)}</Table.Td>
      <Table.Td ta="right">{fmtDuration(r.max_ms)}</Table.Td>
    </>
  );
}

export function EndpointTable({ rows }: { rows: EndpointStat[] }) {
  return (
    <Table striped highlightOnHover aria-label="Endpoint statistics" style={{ whiteSpace: 'nowrap' }}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Service</Table.Th>
          <Table.Th>Endpoint (span name)</Table.Th>
          <LatencyHead />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={`${r.service_name}\u0000${r.span_name}`}>
            <Table.Td>
              <Service name={r.service_name} />
            </Table.Td>
            <Table.Td style={{ whiteSpace: 'normal', wordBreak: 'break-all' }}>
              <Text size="sm" ff="monospace">
                {r.span_name}
              </Text>
            </Table.Td>
            <LatencyCells r={r} />
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function ServiceTable({ rows }: { rows: ServiceStat[] }) {
  return (
    <Table striped aria-label="Service statistics" style={{ whiteSpace: 'nowrap' }}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Service</Table.Th>
          <LatencyHead />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.service_name}>
            <Table.Td>
              <Service name={r.service_name} />
            </Table.Td>
            <LatencyCells r={r} />
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function ModelTable({ rows }: { rows: ModelStat[] }) {
  return (
    <Table striped highlightOnHover aria-label="Model statistics" style={{ whiteSpace: 'nowrap' }}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Provider</Table.Th>
          <Table.Th>Model</Table.Th>
          <Table.Th ta="right">Calls</Table.Th>
          <Table.Th ta="right">Errors</Table.Th>
          <Table.Th ta="right">Input tokens</Table.Th>
          <Table.Th ta="right">Output tokens</Table.Th>
          <Table.Th ta="right">Cost</Table.Th>
          <Table.Th ta="right">p50</Table.Th>
          <Table.Th ta="right">p95</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={`${r.provider}\u0000${r.model}`}>
            <Table.Td>{r.provider ?? '—'}</Table.Td>
            <Table.Td>
              <Text size="sm" ff="monospace">
                {r.model}
              </Text>
            </Table.Td>
            <Table.Td ta="right">{fmtInt(r.call_count)}</Table.Td>
            <Table.Td ta="right">
              <ErrorRate
                rate={r.call_count ? (r.error_count ?? 0) / r.call_count : 0}
                count={r.error_count}
              />
            </Table.Td>
            <Table.Td ta="right">{fmtInt(r.input_tokens)}</Table.Td>
            <Table.Td ta="right">{fmtInt(r.output_tokens)}</Table.Td>
            <Table.Td ta="right">{fmtCost(r.cost_usd)}</Table.Td>
            <Table.Td ta="right">{fmtDuration(r.p50_ms)}</Table.Td>
            <Table.Td ta="right">{fmtDuration(r.p95_ms)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
