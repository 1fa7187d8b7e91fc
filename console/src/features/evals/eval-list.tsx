import { Anchor, Button, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { useAgents } from '../config/agents/queries.js';
import { fmtDate } from '../sessions/format.js';
import { EvalStatus, Verdict } from './eval-status.js';
import { useEvals } from './queries.js';
import { StartEvalForm } from './start-eval-form.js';
import { useCan } from '../../app/auth.js';

/**
 * The project's evals, newest first, with their progress and verdict, and
 * a new one (`?agent=&conversation=` open the form with them chosen: the
 * sessions page links here).
 */
export function EvalList() {
  const { project } = useProject();
  const [params, setParams] = useSearchParams();
  const asked = params.getAll('conversation');
  const [opened, setOpened] = useState(asked.length > 0);
  const evals = useEvals(project?.id);
  const agents = useAgents(project?.id);
  const develops = useCan()('develop');
  const agentName = (id: string | null | undefined) =>
    id ? (agents.data?.find((a) => a.id === id)?.name ?? id) : 'deleted agent';
  const close = () => {
    setOpened(false);
    if (asked.length) setParams({}, { replace: true });
  };

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={3}>Evals</Title>
        {project && develops ? <Button onClick={() => setOpened(true)}>New eval</Button> : null}
      </Group>
      <ErrorAlert error={evals.error} />
      {project && opened ? (
        <StartEvalForm
          projectId={project.id}
          opened={opened}
          onClose={close}
          initial={{ agentId: params.get('agent') ?? undefined, conversationIds: asked }}
        />
      ) : null}
      {!project ? (
        <Empty title="No project yet">
          Create a project first: evals replay its agents&apos; conversations.
        </Empty>
      ) : evals.isLoading ? (
        <Loading what="Loading evals" />
      ) : !evals.data?.length ? (
        <Empty
          title="No eval yet"
          action={
            develops && (
              <Button variant="light" onClick={() => setOpened(true)}>
                New eval
              </Button>
            )
          }
        >
          Replay recorded conversations against another prompt version, model or parameters, and compare the
          answers side by side before shipping the change.
        </Empty>
      ) : (
        <Table striped highlightOnHover aria-label="Evals">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Eval</Table.Th>
              <Table.Th>Agent</Table.Th>
              <Table.Th>Variants</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Progress</Table.Th>
              <Table.Th>Verdict</Table.Th>
              <Table.Th>Created</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {evals.data.map((e) => {
              const total = e.progress?.turns_total ?? 0;
              const done = e.progress?.turns_done ?? 0;
              return (
                <Table.Tr key={e.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/evals/${e.id}`} ff="monospace" size="sm">
                      {e.id?.slice(0, 8)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{agentName(e.agent_id)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{(e.variants ?? []).map((v) => v.name).join(', ')}</Text>
                  </Table.Td>
                  <Table.Td>
                    <EvalStatus status={e.status} />
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Progress value={total ? (100 * done) / total : 0} w={100} aria-label="Progress" />
                      <Text size="xs">
                        {done}/{total || '?'}
                      </Text>
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Verdict passed={e.passed} />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{fmtDate(e.created_at)}</Text>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
