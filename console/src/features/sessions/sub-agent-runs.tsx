import { Anchor, Badge, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client.js';
import type { Run } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fmtDate } from './format.js';
import { LIVE } from './queries.js';

/** One run as GET /runs/{run_id} shows it (with its sub-agent runs); polled while it or they are live. */
function useRun(runId: string | null | undefined, projectId: string | undefined) {
  return useQuery({
    queryKey: ['run', projectId, runId],
    enabled: Boolean(runId),
    refetchInterval: (q) =>
      LIVE.has(q.state.data?.status ?? '') ||
      q.state.data?.sub_agent_runs?.some((r) => LIVE.has(r.status ?? ''))
        ? 2000
        : false,
    queryFn: () =>
      unwrap<Run>(
        api.GET('/api/agent-server/runs/{run_id}', {
          params: { path: { run_id: runId! }, query: projectId ? { project_id: projectId } : {} },
        }),
      ),
  });
}

const sessionLink = (conversationId: string | undefined) =>
  `/sessions/${encodeURIComponent(conversationId ?? '')}`;

/** Whether the run's model could call sub-agents (then GET /runs/{id} lists the runs its calls started). */
function offersSubAgents(run: Run): boolean {
  const offered = (run.tools as { offered?: Array<{ kind?: string }> } | null)?.offered ?? [];
  return offered.some((t) => t.kind === 'sub_agent');
}

/**
 * Sub-agents of a run: the run that called this one (a sub-agent's run), and
 * the runs this run's calls started, each linked to its own conversation.
 */
export function SubAgentRuns({ run }: { run: Run }) {
  const parent = useRun(run.parent_run_id, run.project_id);
  const self = useRun(offersSubAgents(run) ? run.run_id : undefined, run.project_id);
  const children = self.data?.sub_agent_runs ?? [];
  if (!run.parent_run_id && !offersSubAgents(run)) return null;
  return (
    <Stack gap={4}>
      {run.parent_run_id && (
        <Text size="xs">
          Sub-agent run, called by{' '}
          {parent.data ? (
            <Anchor component={Link} to={sessionLink(parent.data.conversation_id)} size="xs">
              {parent.data.agent_name ?? 'an agent'}’s run
            </Anchor>
          ) : (
            'run'
          )}{' '}
          <Text span ff="monospace" size="xs">
            {run.parent_run_id}
          </Text>
        </Text>
      )}
      {offersSubAgents(run) && (
        <div>
          <Title order={6}>Sub-agent runs</Title>
          {children.length === 0 ? (
            <Text size="xs" c="dimmed">
              {self.isPending ? 'Loading…' : 'This run called no sub-agent.'}
            </Text>
          ) : (
            <Table aria-label="Sub-agent runs" withTableBorder>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Agent</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Started</Table.Th>
                  <Table.Th>Conversation</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {children.map((c) => (
                  <Table.Tr key={c.run_id}>
                    <Table.Td>{c.agent_name ?? c.agent_id ?? '—'}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        <Badge size="xs" variant="light" color={c.status === 'completed' ? 'green' : 'gray'}>
                          {c.status}
                        </Badge>
                      </Group>
                    </Table.Td>
                    <Table.Td>{fmtDate(c.created_at)}</Table.Td>
                    <Table.Td>
                      <Anchor component={Link} to={sessionLink(c.conversation_id)} size="xs">
                        {c.conversation_id}
                      </Anchor>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </div>
      )}
      <ErrorAlert error={parent.error ?? self.error} />
    </Stack>
  );
}
