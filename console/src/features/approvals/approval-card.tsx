import { Anchor, Badge, Button, Code, Group, Paper, Stack, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { ErrorAlert } from '../../components/error-alert.js';
import { fmtDate, prettyJson } from '../sessions/format.js';
import type { PendingApproval } from '../../api/types.js';
import { useDecide } from './queries.js';

/** One paused run: the calls it waits on, each with Approve and Decline. */
export function ApprovalCard({ item }: { item: PendingApproval }) {
  const decide = useDecide();
  const calls = item.calls ?? [];
  const runId = item.run_id ?? '';
  const send = (approved: string[], rejected: string[]) => decide.mutate({ runId, approved, rejected });
  const ids = calls.map((c) => c.id ?? '');
  return (
    <Paper withBorder p="md" radius="md" component="article" aria-label={`Approval for run ${runId}`}>
      <Group justify="space-between" align="flex-start" mb="xs">
        <Stack gap={2}>
          <Text fw={600}>{item.agent_name ?? item.agent_id ?? 'Agent'}</Text>
          <Text size="sm" c="dimmed">
            Conversation{' '}
            <Anchor
              component={Link}
              to={`/sessions/${encodeURIComponent(item.conversation_id ?? '')}`}
              ff="monospace"
            >
              {item.conversation_id}
            </Anchor>{' '}
            · waiting since {fmtDate(item.since)}
            {item.timeout_at ? ` · declined automatically at ${fmtDate(item.timeout_at)}` : ''}
          </Text>
        </Stack>
        <Group gap="xs">
          {item.trace_id && (
            <Anchor component={Link} to={`/traces/${item.trace_id}`} size="sm">
              Trace
            </Anchor>
          )}
          {item.temporal_ui_url && (
            <Anchor href={item.temporal_ui_url} target="_blank" rel="noreferrer" size="sm">
              Workflow
            </Anchor>
          )}
        </Group>
      </Group>
      <Table aria-label="Calls waiting">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Tool</Table.Th>
            <Table.Th>Arguments</Table.Th>
            <Table.Th w={220}>Decision</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {calls.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>
                <Group gap={6}>
                  <Code>{c.name}</Code>
                  {c.server && (
                    <Badge size="xs" variant="light">
                      {c.server}
                    </Badge>
                  )}
                  {c.kind === 'sandbox' && (
                    <Badge size="xs" variant="light" color="orange">
                      sandbox
                    </Badge>
                  )}
                </Group>
              </Table.Td>
              <Table.Td>
                <Code block>{prettyJson(c.arguments ?? '')}</Code>
              </Table.Td>
              <Table.Td>
                <Group gap="xs">
                  <Button
                    size="xs"
                    color="green"
                    loading={decide.isPending}
                    onClick={() => send([c.id ?? ''], [])}
                    aria-label={`Approve ${c.name ?? 'call'}`}
                  >
                    Approve
                  </Button>
                  <Button
                    size="xs"
                    color="red"
                    variant="light"
                    loading={decide.isPending}
                    onClick={() => send([], [c.id ?? ''])}
                    aria-label={`Decline ${c.name ?? 'call'}`}
                  >
                    Decline
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {calls.length > 1 && (
        <Group justify="flex-end" mt="xs" gap="xs">
          <Button
            size="xs"
            color="green"
            variant="outline"
            loading={decide.isPending}
            onClick={() => send(ids, [])}
          >
            Approve all
          </Button>
          <Button
            size="xs"
            color="red"
            variant="outline"
            loading={decide.isPending}
            onClick={() => send([], ids)}
          >
            Decline all
          </Button>
        </Group>
      )}
      <ErrorAlert error={decide.error} />
    </Paper>
  );
}
