import { Badge, Button, Code, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import type { Provider } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { PageHeader } from '../shared/page-header.js';
import { ProviderForm } from './provider-form.js';
import { useDeleteProvider, useProviders } from './queries.js';

/** The API key as the API shows it: masked, with its last 4 characters when long enough. */
function maskedKey(p: Provider) {
  if (!p.has_api_key) return <Text c="dimmed">none</Text>;
  return <Code>{`••••••••${p.api_key_last4 ?? ''}`}</Code>;
}

export function ProvidersPage() {
  const list = useProviders();
  const del = useDeleteProvider();
  const [editing, setEditing] = useState<Provider | 'new' | null>(null);
  const newButton = <Button onClick={() => setEditing('new')}>New provider</Button>;
  return (
    <>
      <PageHeader title="Providers" action={newButton}>
        Vendor accounts the gateway and the agents call. Global: every project uses the same providers.
      </PageHeader>
      {list.isLoading && <Loading what="Loading providers" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No provider yet">
          Add a provider (OpenAI, Anthropic, Gemini, or any OpenAI-compatible endpoint) with its API key, then
          define models on it.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Base URL</Table.Th>
              <Table.Th>API key</Table.Th>
              <Table.Th>Timeouts</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>{p.name}</Table.Td>
                <Table.Td>
                  <Badge variant="light">{p.provider_type}</Badge>
                </Table.Td>
                <Table.Td>
                  {p.base_url ? <Code>{p.base_url}</Code> : <Text c="dimmed">vendor default</Text>}
                </Table.Td>
                <Table.Td>{maskedKey(p)}</Table.Td>
                <Table.Td>
                  <Text size="xs">
                    connect {p.connect_timeout_ms} ms · total {p.timeout_ms} ms
                  </Text>
                </Table.Td>
                <Table.Td>
                  <RowActions
                    name={p.name}
                    onEdit={() => setEditing(p)}
                    onDelete={() => del.mutateAsync(p.id)}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="provider" onClose={() => setEditing(null)} size="lg">
        {(item) => <ProviderForm provider={item} onDone={() => setEditing(null)} />}
      </EditModal>
    </>
  );
}
