import { Group, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { AreaNav } from './area-nav.js';
import { useEndpointStats, useModelStats, useServiceStats } from './queries.js';
import { EndpointTable, ModelTable, ServiceTable } from './stats-tables.js';
import { useTimeWindow } from './time-window.js';

const KINDS = ['SERVER', 'CLIENT', 'INTERNAL', 'PRODUCER', 'CONSUMER'];

/** Latency and errors per endpoint and per service, and model calls per model, over a time window. */
export function StatsPage() {
  const { project } = useProject();
  const { window, control } = useTimeWindow();
  const [kind, setKind] = useState<string>('SERVER');
  const [service, setService] = useState('');
  const [serviceQ] = useDebouncedValue(service.trim(), 300);
  const [projectOnly, setProjectOnly] = useState(false);
  // The console's own requests (this page's among them) are left out unless asked.
  const [withConsole, setWithConsole] = useState(false);
  const endpoints = useEndpointStats(
    window,
    kind === 'any' ? undefined : kind,
    serviceQ || undefined,
    withConsole,
  );
  const services = useServiceStats(window, withConsole);
  const models = useModelStats(window, projectOnly ? project?.id : undefined, withConsole);

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={3}>Trace statistics</Title>
        <Group gap="md">
          <Switch
            label="Console's own requests"
            checked={withConsole}
            onChange={(e) => setWithConsole(e.currentTarget.checked)}
            size="xs"
          />
          {control}
        </Group>
      </Group>
      <AreaNav />

      <Stack gap="xs">
        <Group justify="space-between" align="flex-end">
          <Title order={4}>Endpoints</Title>
          <Group gap="sm" align="flex-end">
            <Select
              label="Span kind"
              data={[{ value: 'any', label: 'Any kind' }, ...KINDS.map((k) => ({ value: k, label: k }))]}
              value={kind}
              onChange={(v) => setKind(v ?? 'SERVER')}
              allowDeselect={false}
              w={140}
              size="xs"
            />
            <TextInput
              label="Service"
              placeholder="Any service"
              value={service}
              onChange={(e) => setService(e.currentTarget.value)}
              w={200}
              size="xs"
            />
          </Group>
        </Group>
        <ErrorAlert error={endpoints.error} />
        {endpoints.isLoading ? (
          <Loading what="Loading endpoint statistics" />
        ) : !endpoints.data?.length ? (
          <Empty title="No span in this window">
            Widen the time window, choose another span kind, or call the API.
          </Empty>
        ) : (
          <EndpointTable rows={endpoints.data} />
        )}
      </Stack>

      <Stack gap="xs">
        <Group justify="space-between" align="flex-end">
          <Title order={4}>Models</Title>
          <Switch
            label="This project only"
            checked={projectOnly}
            disabled={!project}
            onChange={(e) => setProjectOnly(e.currentTarget.checked)}
          />
        </Group>
        <ErrorAlert error={models.error} />
        {models.isLoading ? (
          <Loading what="Loading model statistics" />
        ) : !models.data?.length ? (
          <Empty title="No model call in this window">
            Model calls from sessions and the gateway are counted here: talk to an agent or call the gateway,
            or widen the time window.
          </Empty>
        ) : (
          <ModelTable rows={models.data} />
        )}
      </Stack>

      <Stack gap="xs">
        <Title order={4}>Services</Title>
        <Text size="xs" c="dimmed">
          Over each service&apos;s entry spans.
        </Text>
        <ErrorAlert error={services.error} />
        {services.isLoading ? (
          <Loading what="Loading service statistics" />
        ) : !services.data?.length ? (
          <Empty title="No service reported spans in this window">Widen the time window.</Empty>
        ) : (
          <ServiceTable rows={services.data} />
        )}
      </Stack>
    </Stack>
  );
}
