import { Badge, Button, Code, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { useProviders } from '../providers/queries.js';
import type { Model } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { NeedProject } from '../shared/need-project.js';
import { PageHeader } from '../shared/page-header.js';
import { ModelForm } from './model-form.js';
import { useDeleteModel, useModels } from './queries.js';

const usd = (n: number) => `$${n.toLocaleString(undefined, { maximumFractionDigits: 6 })}`;

function Models({ projectId }: { projectId: string }) {
  const list = useModels(projectId);
  const providers = useProviders();
  const del = useDeleteModel(projectId);
  const [editing, setEditing] = useState<Model | 'new' | null>(null);
  const providerName = (id: string | null) =>
    id ? (providers.data?.find((p) => p.id === id)?.name ?? id) : 'only one of its type';
  return (
    <>
      <PageHeader title="Models" action={<Button onClick={() => setEditing('new')}>New model</Button>}>
        Models this project&apos;s agents use: the provider-side model id, the provider, sampling parameters
        and pricing (for cost in usage and traces).
      </PageHeader>
      {list.isLoading && <Loading what="Loading models" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No model in this project">
          Add a model (for example gpt-4o-mini on your OpenAI provider) so agents can use it.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Model id</Table.Th>
              <Table.Th>Provider</Table.Th>
              <Table.Th>Pricing (per 1M in / out)</Table.Th>
              <Table.Th>Parameters</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{m.name}</Table.Td>
                <Table.Td>
                  <Code>{m.model_id}</Code>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light" mr={6}>
                    {m.provider_type}
                  </Badge>
                  {providerName(m.provider_id)}
                </Table.Td>
                <Table.Td>
                  {m.pricing ? (
                    `${usd(m.pricing.input_per_million_usd ?? 0)} / ${usd(m.pricing.output_per_million_usd ?? 0)}`
                  ) : (
                    <Text c="dimmed" size="sm">
                      built-in table
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  {Object.keys(m.parameters).length ? <Code>{JSON.stringify(m.parameters)}</Code> : '—'}
                </Table.Td>
                <Table.Td>
                  <RowActions
                    name={m.name}
                    onEdit={() => setEditing(m)}
                    onDelete={() => del.mutateAsync(m.id)}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="model" onClose={() => setEditing(null)} size="lg">
        {(item) => <ModelForm projectId={projectId} model={item} onDone={() => setEditing(null)} />}
      </EditModal>
    </>
  );
}

export function ModelsPage() {
  return <NeedProject>{(p) => <Models key={p.id} projectId={p.id} />}</NeedProject>;
}
