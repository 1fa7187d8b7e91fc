import { Badge, Button, Code, Group, Table } from '@mantine/core';
import { ErrorAlert } from '../../components/error-alert.js';
import { prettyJson } from '../sessions/format.js';
import type { PendingApproval } from '../../api/types.js';
import { useDecide } from './queries.js';
import { WaitCard } from './wait-card.js';
import { useCan } from '../../app/auth.js';

/** A run waiting for approval: the calls it waits on, each with Approve and Decline. */
export function ApprovalCard({ item }: { item: PendingApproval }) {
  const decide = useDecide();
  const calls = item.calls ?? [];
  const runId = item.run_id ?? '';
  const send = (approved: string[], rejected: string[]) => decide.mutate({ runId, approved, rejected });
  const ids = calls.map((c) => c.id ?? '');
  // Deciding needs the operator role; a viewer sees what waits.
  const operates = useCan()('operate');
  return (
    <WaitCard
      label={`Approval for run ${runId}`}
      reason="approval"
      colour="yellow"
      head={{
        runId,
        agent: item.agent_name ?? item.agent_id ?? 'Agent',
        conversationId: item.conversation_id ?? '',
        since: item.since,
        timeout: { at: item.timeout_at, outcome: 'declined' },
        traceId: item.trace_id,
        temporalUrl: item.temporal_ui_url,
      }}
    >
      <Table aria-label="Calls waiting">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Tool</Table.Th>
            <Table.Th>Arguments</Table.Th>
            {operates && <Table.Th w={220}>Decision</Table.Th>}
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
              {operates && (
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
              )}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {operates && calls.length > 1 && (
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
    </WaitCard>
  );
}
