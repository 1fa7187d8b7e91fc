import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import type { Agent, AgentVersion } from '../../../api/types.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { changesFrom } from './version-diff.js';
import { useAgentVersions, usePinVersion } from './version-queries.js';

/** Pin, then a confirmation in place of the button (a dialog inside the form's dialog would trap focus twice). */
function PinAction({ version, busy, onPin }: { version: number; busy: boolean; onPin: () => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <Button
        size="compact-sm"
        variant="subtle"
        aria-label={`Pin version ${version}`}
        onClick={() => setAsking(true)}
      >
        Pin
      </Button>
    );
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm">Put version {version} back in force?</Text>
      <Button size="compact-sm" color="orange" loading={busy} onClick={onPin}>
        Pin version {version}
      </Button>
      <Button size="compact-sm" variant="default" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </Button>
    </Group>
  );
}

function VersionRow(props: {
  v: AgentVersion;
  before: AgentVersion | undefined;
  busy: boolean;
  onPin: () => void;
}) {
  const { v, before } = props;
  return (
    <Table.Tr>
      <Table.Td>{v.version}</Table.Td>
      <Table.Td>{new Date(v.created_at).toLocaleString()}</Table.Td>
      <Table.Td>
        <Text size="sm">{changesFrom(v.settings, before?.settings)}</Text>
      </Table.Td>
      <Table.Td>
        {v.in_force ? (
          <Badge color="green">in force</Badge>
        ) : (
          <PinAction version={v.version} busy={props.busy} onPin={props.onPin} />
        )}
      </Table.Td>
    </Table.Tr>
  );
}

/** Every write of the agent, newest first, and Pin to put an earlier one back in force. */
function AgentVersions(props: { projectId: string; agentId: string; onPinned: (agent: Agent) => void }) {
  const list = useAgentVersions(props.projectId, props.agentId);
  const pin = usePinVersion(props.projectId, props.agentId);
  if (list.isPending) return <Loading what="Loading versions" />;
  const versions = list.data ?? [];
  return (
    <Stack>
      <ErrorAlert error={list.error ?? pin.error} />
      {versions.length === 0 ? (
        <Text size="sm" c="dimmed">
          No version listed: each save of the agent makes one.
        </Text>
      ) : (
        <Table aria-label="Versions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Th>Saved</Table.Th>
              <Table.Th>Changed from the one before</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {versions.map((v, i) => (
              <VersionRow
                key={v.version}
                v={v}
                before={versions[i + 1]}
                busy={pin.isPending && pin.variables === v.version}
                onPin={() => pin.mutate(v.version, { onSuccess: props.onPinned })}
              />
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** Versions of an existing agent; a new agent gets its first when it is created. */
export function VersionsSection(props: {
  projectId: string;
  agentId: string | undefined;
  onPinned: (agent: Agent) => void;
}) {
  if (!props.agentId)
    return (
      <Text size="sm" c="dimmed">
        Creating the agent makes its version 1; each save after makes the next.
      </Text>
    );
  return <AgentVersions {...props} agentId={props.agentId} />;
}
