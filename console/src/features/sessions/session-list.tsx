import { Anchor, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useEffectEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { fmtCost, fmtDate } from './format.js';
import { Pager } from './pager.js';
import { useAgents } from '../config/agents/queries.js';
import { PAGE, useConversations } from './queries.js';
import { RunStatus } from './runs-table.js';

/**
 * Conversations of the project, newest first, with the agent and status of
 * their latest turn and what their turns cost; filtered by agent and
 * namespace (kept in the URL).
 */
export function SessionList() {
  const { project } = useProject();
  const [params, setParams] = useSearchParams();
  const agentId = params.get('agent') ?? '';
  const offset = Number(params.get('offset') ?? 0) || 0;
  const [namespace, setNamespace] = useState(params.get('namespace') ?? '');
  const [debounced] = useDebouncedValue(namespace.trim(), 300);
  const set = (key: string, value: string) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        if (value) next.set(key, value);
        else next.delete(key);
        if (key !== 'offset') next.delete('offset');
        return next;
      },
      { replace: true },
    );
  // Into the URL when the typed value settles (not on every key, not when the URL changes).
  const settle = useEffectEvent((value: string) => {
    if ((params.get('namespace') ?? '') !== value) set('namespace', value);
  });
  useEffect(() => settle(debounced), [debounced]);

  const agents = useAgents(project?.id);
  const list = useConversations(project?.id, { agentId, namespace: debounced, offset });
  const agentOptions = (agents.data ?? []).map((a) => ({ value: a.id ?? '', label: a.name ?? a.id ?? '' }));

  return (
    <Stack gap="md">
      <Title order={3}>Sessions</Title>
      <Group align="flex-end">
        <Select
          label="Agent"
          placeholder="All agents"
          data={agentOptions}
          value={agentId || null}
          onChange={(v) => set('agent', v ?? '')}
          clearable
          searchable
          w={260}
        />
        <TextInput
          label="Namespace"
          placeholder="Any namespace"
          value={namespace}
          onChange={(e) => setNamespace(e.currentTarget.value)}
          w={220}
        />
      </Group>
      <ErrorAlert error={list.error ?? agents.error} />
      {!project ? (
        <Empty title="No project yet">Create a project first: conversations belong to a project.</Empty>
      ) : list.isLoading ? (
        <Loading what="Loading conversations" />
      ) : !list.data?.length ? (
        <Empty
          title={agentId || debounced ? 'No conversation matches these filters' : 'No conversation yet'}
          action={
            <Anchor component={Link} to="/playground" size="sm">
              Open the playground
            </Anchor>
          }
        >
          {agentId || debounced
            ? 'Clear the filters to see every conversation of this project.'
            : 'Talk to an agent in the playground (or POST /converse) and its conversation appears here.'}
        </Empty>
      ) : (
        <>
          <Table striped highlightOnHover aria-label="Conversations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Conversation</Table.Th>
                <Table.Th>Agent</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Turns</Table.Th>
                <Table.Th ta="right">Cost</Table.Th>
                <Table.Th>Namespace</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last activity</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>
                    <Anchor
                      component={Link}
                      to={`/sessions/${encodeURIComponent(c.id ?? '')}`}
                      ff="monospace"
                      size="sm"
                    >
                      {c.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{c.last_run?.agent_name ?? c.last_run?.agent_id ?? '—'}</Text>
                  </Table.Td>
                  <Table.Td>{c.last_run ? <RunStatus status={c.last_run.status} /> : '—'}</Table.Td>
                  <Table.Td ta="right">{c.run_count ?? 0}</Table.Td>
                  <Table.Td ta="right">{fmtCost(c.cost_usd)}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{c.namespace}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{fmtDate(c.created_at)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{fmtDate(c.updated_at)}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager
            offset={offset}
            pageSize={PAGE}
            count={list.data.length}
            onChange={(o) => set('offset', o ? String(o) : '')}
          />
        </>
      )}
    </Stack>
  );
}
