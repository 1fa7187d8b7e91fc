import { Badge, Button, Code, Modal, Table } from '@mantine/core';
import { useState } from 'react';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import type { McpServer } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { NeedProject } from '../shared/need-project.js';
import { PageHeader } from '../shared/page-header.js';
import { InspectTools } from './inspect.js';
import { McpForm } from './mcp-form.js';
import { useDeleteMcpServer, useMcpServers } from './queries.js';

function McpServers({ projectId }: { projectId: string }) {
  const list = useMcpServers(projectId);
  const del = useDeleteMcpServer(projectId);
  const [editing, setEditing] = useState<McpServer | 'new' | null>(null);
  const [inspecting, setInspecting] = useState<McpServer | null>(null);
  return (
    <>
      <PageHeader
        title="MCP servers"
        action={<Button onClick={() => setEditing('new')}>New MCP server</Button>}
      >
        Tool servers this project&apos;s agents may use. Inspect one to see the tools it offers.
      </PageHeader>
      {list.isLoading && <Loading what="Loading MCP servers" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No MCP server in this project">
          Add an MCP server by its endpoint, inspect it to list its tools, then give it to an agent.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Endpoint</Table.Th>
              <Table.Th>Transport</Table.Th>
              <Table.Th>Headers</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>{s.name}</Table.Td>
                <Table.Td>
                  <Code>{s.endpoint}</Code>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light">{s.transport}</Badge>
                </Table.Td>
                <Table.Td>{Object.keys(s.headers).join(', ') || '—'}</Table.Td>
                <Table.Td>
                  <RowActions
                    name={s.name}
                    onEdit={() => setEditing(s)}
                    onDelete={() => del.mutateAsync(s.id)}
                  >
                    <Button
                      size="compact-sm"
                      variant="light"
                      onClick={() => setInspecting(s)}
                      aria-label={`Inspect ${s.name}`}
                    >
                      Inspect
                    </Button>
                  </RowActions>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="MCP server" onClose={() => setEditing(null)} size="lg">
        {(item) => <McpForm projectId={projectId} server={item} onDone={() => setEditing(null)} />}
      </EditModal>
      <Modal
        opened={inspecting !== null}
        onClose={() => setInspecting(null)}
        title={`Tools of ${inspecting?.name ?? ''}`}
        size="xl"
      >
        {inspecting && <InspectTools server={inspecting} />}
      </Modal>
    </>
  );
}

export function McpPage() {
  return <NeedProject>{(p) => <McpServers key={p.id} projectId={p.id} />}</NeedProject>;
}
