import { Anchor, Badge, Button, Code, Stack, Table, Text } from '@mantine/core';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { useAgentCrons, useSetCronPaused, type Cron } from './cron-queries.js';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

function CronRow({ cron, onPause, busy }: { cron: Cron; onPause: (paused: boolean) => void; busy: boolean }) {
  return (
    <Table.Tr>
      <Table.Td>
        <Code>{cron.schedule}</Code>
      </Table.Td>
      <Table.Td>{cron.timezone}</Table.Td>
      <Table.Td>
        <Text size="sm">{cron.conversation_id ?? 'new conversation each run'}</Text>
      </Table.Td>
      <Table.Td>{when(cron.next_run_date)}</Table.Td>
      <Table.Td>
        {cron.paused ? (
          <Badge color="gray">paused</Badge>
        ) : (
          <Badge color="green">active{cron.end_time ? ` until ${when(cron.end_time)}` : ''}</Badge>
        )}
      </Table.Td>
      <Table.Td>
        <Button
          size="compact-sm"
          variant="subtle"
          loading={busy}
          aria-label={`${cron.paused ? 'Resume' : 'Pause'} cron ${cron.schedule}`}
          onClick={() => onPause(!cron.paused)}
        >
          {cron.paused ? 'Resume' : 'Pause'}
        </Button>
        {cron.temporal_ui_url && (
          <Anchor href={cron.temporal_ui_url} target="_blank" size="sm" ml="xs">
            Schedule in Temporal
          </Anchor>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

/** The agent's crons: when each runs next, paused or not, with a pause/resume button. */
function AgentCrons({ projectId, agentId }: { projectId: string; agentId: string }) {
  const list = useAgentCrons(projectId, agentId);
  const setPaused = useSetCronPaused(projectId, agentId);
  if (list.isPending) return <Loading what="Loading schedules" />;
  const crons = list.data ?? [];
  return (
    <Stack>
      <ErrorAlert error={list.error ?? setPaused.error} />
      {crons.length === 0 ? (
        <Text size="sm" c="dimmed">
          No schedule yet: create one with the Agent Protocol’s{' '}
          <Code>POST /api/langgraph/{'{project_id}'}/runs/crons</Code> (or <Code>client.crons.create</Code> of
          @langchain/langgraph-sdk), on a thread or stateless.
        </Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Schedule</Table.Th>
              <Table.Th>Time zone</Table.Th>
              <Table.Th>Conversation</Table.Th>
              <Table.Th>Next run</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {crons.map((c) => (
              <CronRow
                key={c.id}
                cron={c}
                busy={setPaused.isPending && setPaused.variables?.id === c.id}
                onPause={(paused) => setPaused.mutate({ id: c.id, paused })}
              />
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** Schedules (crons) of an existing agent; a new agent has none yet. */
export function CronsSection({ projectId, agentId }: { projectId: string; agentId: string | undefined }) {
  if (!agentId)
    return (
      <Text size="sm" c="dimmed">
        Schedules can be added once the agent exists.
      </Text>
    );
  return <AgentCrons projectId={projectId} agentId={agentId} />;
}
