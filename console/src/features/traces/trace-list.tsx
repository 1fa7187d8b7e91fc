import { Anchor, Badge, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useSearchParams } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { fmtDate, fmtDuration } from '../sessions/format.js';
import { Pager } from '../sessions/pager.js';
import { useAgents } from '../config/agents/queries.js';
import { AreaNav } from './area-nav.js';
import { ServiceDot } from './service-dot.js';
import { colourVar, serviceColour } from './services.js';
import { ALL_PROJECTS, effectiveFilters, FILTER_KEYS, TraceFilterForm } from './trace-filters.js';
import { TRACE_PAGE, useTraces } from './queries.js';
import { useTimeWindow } from './time-window.js';

/** Traces newest first, with the API's filters (kept in the URL, so a link can carry them). */
export function TraceList() {
  const { project } = useProject();
  const [params, setParams] = useSearchParams();
  const { window, control } = useTimeWindow();
  const filters = effectiveFilters(params, project?.id);
  const offset = Number(params.get('offset') ?? 0) || 0;
  const q = useTraces(window, filters, offset);
  const agents = useAgents(project?.id);
  const agentOptions = (agents.data ?? []).map((a) => ({ value: a.id ?? '', label: a.name ?? '' }));
  const apply = (f: Record<string, string>) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      for (const k of FILTER_KEYS) {
        if (f[k]) next.set(k, f[k]);
        else next.delete(k);
      }
      // The current project is the default: only another project, or none, goes into the address.
      if (f.project_id === project?.id) next.delete('project_id');
      if (f.project_id) next.delete(ALL_PROJECTS);
      else next.set(ALL_PROJECTS, 'true');
      next.delete('offset');
      return next;
    });
  const setOffset = (o: number) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      if (o) next.set('offset', String(o));
      else next.delete('offset');
      return next;
    });
  const filtered = Object.keys(filters).some((k) => k !== 'project_id' && k !== 'include_console');
  const maxMs = Math.max(1, ...(q.data ?? []).map((t) => t.duration_ms ?? 0));

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={3}>Traces</Title>
        {control}
      </Group>
      <AreaNav />
      <TraceFilterForm
        key={params.toString()}
        value={filters}
        projectId={project?.id}
        agents={agentOptions}
        onApply={apply}
      />
      <ErrorAlert error={q.error} />
      {q.isLoading ? (
        <Loading what="Loading traces" />
      ) : !q.data?.length ? (
        <Empty title={filtered ? 'No trace matches these filters' : 'No trace in this window'}>
          {filtered
            ? 'Loosen the filters or widen the time window.'
            : 'Every API request and session turn is traced: call the API or talk to an agent in the playground, or widen the time window.'}
          {filters.project_id
            ? ' Only traces naming this project (its agent turns) are shown: turn off “This project only” for every request.'
            : ''}
        </Empty>
      ) : (
        <>
          <Table highlightOnHover aria-label="Traces">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Started</Table.Th>
                <Table.Th>Root span</Table.Th>
                <Table.Th>Service</Table.Th>
                <Table.Th w="22%">Duration</Table.Th>
                <Table.Th ta="right">Spans</Table.Th>
                <Table.Th ta="right">Errors</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {q.data.map((t) => (
                <Table.Tr key={t.trace_id}>
                  <Table.Td>
                    <Text size="sm">{fmtDate(t.start_time)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Anchor component={Link} to={`/traces/${t.trace_id}`} size="sm">
                      {t.root_span_name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <ServiceDot service={t.root_service_name} />
                      <Text size="sm">{t.root_service_name}</Text>
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <div
                        style={{
                          flex: 1,
                          height: 6,
                          background: 'var(--mantine-color-default-border)',
                          borderRadius: 3,
                        }}
                      >
                        <div
                          style={{
                            width: `${Math.max(((t.duration_ms ?? 0) / maxMs) * 100, 1)}%`,
                            height: 6,
                            borderRadius: 3,
                            background: colourVar(serviceColour(t.root_service_name)),
                          }}
                        />
                      </div>
                      <Text size="sm" w={70} ta="right">
                        {fmtDuration(t.duration_ms)}
                      </Text>
                    </Group>
                  </Table.Td>
                  <Table.Td ta="right">{t.span_count}</Table.Td>
                  <Table.Td ta="right">
                    {t.error_count ? (
                      <Badge color="red">{t.error_count}</Badge>
                    ) : (
                      <Text size="sm" c="dimmed">
                        0
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager offset={offset} pageSize={TRACE_PAGE} count={q.data.length} onChange={setOffset} />
        </>
      )}
    </Stack>
  );
}
