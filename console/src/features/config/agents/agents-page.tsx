import { Badge, Button, Table, Text, Tooltip } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { usePrompts } from '../../prompts/queries.js';
import { useModels } from '../models/queries.js';
import type { Agent } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { NeedProject } from '../shared/need-project.js';
import { PageHeader } from '../shared/page-header.js';
import { AgentForm } from './agent-form.js';
import { useAgents, useDeleteAgent } from './queries.js';

function Agents({ projectId }: { projectId: string }) {
  const list = useAgents(projectId);
  const models = useModels(projectId);
  const prompts = usePrompts(projectId);
  const del = useDeleteAgent(projectId);
  const [editing, setEditing] = useState<Agent | 'new' | null>(null);
  const modelName = (id: string) => models.data?.find((m) => m.id === id)?.name ?? id;
  const promptName = (id: string) => prompts.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <>
      <PageHeader title="Agents" action={<Button onClick={() => setEditing('new')}>New agent</Button>}>
        What a session runs: a model, a prompt, tools (MCP servers, the sandbox), skills, a summarizer and
        limits.
      </PageHeader>
      {list.isLoading && <Loading what="Loading agents" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No agent in this project">
          Create an agent from a model and a prompt, then talk to it in the playground.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Model</Table.Th>
              <Table.Th>Prompt</Table.Th>
              <Table.Th>Summarizer</Table.Th>
              <Table.Th>Tools</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((a) => (
              <Table.Tr key={a.id}>
                <Table.Td>
                  {a.name}{' '}
                  {!!a.warnings?.length && (
                    <Tooltip label={a.warnings.join(' ')} multiline w={320}>
                      <Badge color="yellow" variant="light" tabIndex={0}>
                        warning
                      </Badge>
                    </Tooltip>
                  )}
                </Table.Td>
                <Table.Td>{modelName(a.model_id)}</Table.Td>
                <Table.Td>
                  {promptName(a.prompt_id)} <Badge variant="outline">{a.prompt_label}</Badge>
                </Table.Td>
                <Table.Td>{a.summarizer_type}</Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {a.mcp_servers.length} MCP{a.sandbox.enabled ? ' · sandbox' : ''}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <RowActions
                    name={a.name}
                    onEdit={() => setEditing(a)}
                    onDelete={() => del.mutateAsync(a.id)}
                  >
                    <Button
                      size="compact-sm"
                      variant="light"
                      component={Link}
                      to={`/playground?project=${projectId}&agent=${a.id}`}
                      aria-label={`Open ${a.name} in the playground`}
                    >
                      Playground
                    </Button>
                  </RowActions>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="agent" onClose={() => setEditing(null)} size="xl">
        {(item) => <AgentForm projectId={projectId} agent={item} onDone={() => setEditing(null)} />}
      </EditModal>
    </>
  );
}

export function AgentsPage() {
  return <NeedProject>{(p) => <Agents key={p.id} projectId={p.id} />}</NeedProject>;
}
