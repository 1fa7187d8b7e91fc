import { Paper, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Data, Item } from '../../api/types.js';
import { useProject } from '../../app/project.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { formatUsd } from '../../lib/money.js';
import { fmtDuration, fmtInt } from '../sessions/format.js';

type Row = Item<Data<'getApiAgentServerRunsStatistics'>>;

/** The project's runs over the window, one row per door they came through. */
function useRunsBySource(projectId: string | undefined, start: string) {
  return useQuery({
    queryKey: ['runs-statistics', projectId, 'source', start],
    enabled: !!projectId,
    refetchInterval: 30_000,
    queryFn: () =>
      unwrap<Row[]>(
        api.GET('/api/agent-server/runs/statistics', {
          params: { query: { project_id: projectId!, group_by: 'source', start_time: start } },
        }),
      ),
  });
}

/** Agent runs of the chosen project by source (REST, MCP, A2A, schedules, sub-agents…) over the window. */
export function RunsBySource({ start }: { start: string }) {
  const { project } = useProject();
  const stats = useRunsBySource(project?.id, start);
  if (!project) return null;
  return (
    <Paper withBorder p="md" radius="md">
      <Title order={5} mb="sm">
        Runs by source ({project.name})
      </Title>
      {stats.isLoading && <Loading what="Loading run statistics" />}
      <ErrorAlert error={stats.error} />
      {stats.data?.length === 0 && (
        <Text size="sm" c="dimmed">
          No runs in this window.
        </Text>
      )}
      {!!stats.data?.length && (
        <Table aria-label="Runs by source" style={{ whiteSpace: 'nowrap' }}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Source</Table.Th>
              <Table.Th ta="right">Runs</Table.Th>
              <Table.Th ta="right">Completed</Table.Th>
              <Table.Th ta="right">Failed</Table.Th>
              <Table.Th ta="right">Cancelled</Table.Th>
              <Table.Th ta="right">Tokens in / out</Table.Th>
              <Table.Th ta="right">Cost</Table.Th>
              <Table.Th ta="right">p50 duration</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {stats.data.map((r) => (
              <Table.Tr key={r.source ?? '?'}>
                <Table.Td>{(r.source ?? '—').replace('_', '-')}</Table.Td>
                <Table.Td ta="right">{fmtInt(r.runs)}</Table.Td>
                <Table.Td ta="right">{fmtInt(r.completed)}</Table.Td>
                <Table.Td ta="right">{fmtInt(r.failed)}</Table.Td>
                <Table.Td ta="right">{fmtInt(r.cancelled)}</Table.Td>
                <Table.Td ta="right">
                  {fmtInt(r.input_tokens)} / {fmtInt(r.output_tokens)}
                </Table.Td>
                <Table.Td ta="right">{formatUsd(r.cost_usd ?? 0)}</Table.Td>
                <Table.Td ta="right">{fmtDuration(r.p50_duration_ms ?? undefined)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Paper>
  );
}
