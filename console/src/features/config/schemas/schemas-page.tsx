import { Button, Code, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import type { JsonSchemaDoc } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { NeedProject } from '../shared/need-project.js';
import { PageHeader } from '../shared/page-header.js';
import { useDeleteSchema, useSchemas } from './queries.js';
import { SchemaForm } from './schema-form.js';

function summary(s: Record<string, unknown>): string {
  const props = s.properties && typeof s.properties === 'object' ? Object.keys(s.properties) : [];
  const type = typeof s.type === 'string' ? s.type : 'schema';
  return props.length ? `${type} { ${props.slice(0, 6).join(', ')}${props.length > 6 ? ', …' : ''} }` : type;
}

function Schemas({ projectId }: { projectId: string }) {
  const list = useSchemas(projectId);
  const del = useDeleteSchema(projectId);
  const [editing, setEditing] = useState<JsonSchemaDoc | 'new' | null>(null);
  return (
    <>
      <PageHeader title="Schemas" action={<Button onClick={() => setEditing('new')}>New schema</Button>}>
        JSON Schemas for structured output: an agent with a schema answers in JSON that validates against it.
      </PageHeader>
      {list.isLoading && <Loading what="Loading schemas" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No schema in this project">
          Add a JSON Schema, then choose it on an agent to get structured answers.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Shape</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>{s.name}</Table.Td>
                <Table.Td>
                  <Text size="sm" lineClamp={2}>
                    {s.description ?? '—'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Code>{summary(s.schema)}</Code>
                </Table.Td>
                <Table.Td>
                  <RowActions
                    name={s.name}
                    onEdit={() => setEditing(s)}
                    onDelete={() => del.mutateAsync(s.id)}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="schema" onClose={() => setEditing(null)} size="xl">
        {(item) => <SchemaForm projectId={projectId} schema={item} onDone={() => setEditing(null)} />}
      </EditModal>
    </>
  );
}

export function SchemasPage() {
  return <NeedProject>{(p) => <Schemas key={p.id} projectId={p.id} />}</NeedProject>;
}
