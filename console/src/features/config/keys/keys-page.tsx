import { Badge, Button, Code, Group, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { useProviders } from '../providers/queries.js';
import type { VirtualKey } from '../../../api/types.js';
import { DeleteButton } from '../shared/delete-button.js';
import { EditModal } from '../shared/edit-modal.js';
import { PageHeader } from '../shared/page-header.js';
import { KeyForm } from './key-form.js';
import { useRevokeVirtualKey, useRotateVirtualKey, useVirtualKeys } from './queries.js';
import { SecretModal } from './secret-modal.js';

function limits(k: VirtualKey): string {
  const parts = [];
  if (k.rate_limit?.requests_per_minute) parts.push(`${k.rate_limit.requests_per_minute} req/min`);
  if (k.rate_limit?.tokens_per_minute) parts.push(`${k.rate_limit.tokens_per_minute} tok/min`);
  return parts.join(' · ') || '—';
}

export function KeysPage() {
  const list = useVirtualKeys();
  const providers = useProviders();
  const rotate = useRotateVirtualKey();
  const revoke = useRevokeVirtualKey();
  const [editing, setEditing] = useState<VirtualKey | 'new' | null>(null);
  // The secret lives here only while its dialog is open.
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const providerName = (id: string) => providers.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <>
      <PageHeader
        title="Virtual keys"
        action={<Button onClick={() => setEditing('new')}>New virtual key</Button>}
      >
        Keys applications present to the gateway: which providers and models they may call, rate limits,
        budgets and fallbacks. The secret is shown once.
      </PageHeader>
      {list.isLoading && <Loading what="Loading virtual keys" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No virtual key yet">
          Create a virtual key granting a provider&apos;s models, then call the gateway with its secret.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>Grants</Table.Th>
              <Table.Th>Rate limit</Table.Th>
              <Table.Th>Budget</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((k) => (
              <Table.Tr key={k.id}>
                <Table.Td>{k.name}</Table.Td>
                <Table.Td>
                  <Code>{`${k.key_prefix}…`}</Code>
                </Table.Td>
                <Table.Td>
                  {k.providers.map((g) => (
                    <Text size="sm" key={g.provider_id}>
                      {providerName(g.provider_id ?? '')}: {(g.model_names ?? []).join(', ')}
                    </Text>
                  ))}
                </Table.Td>
                <Table.Td>{limits(k)}</Table.Td>
                <Table.Td>{k.budget ? `$${k.budget.max_usd} / ${k.budget.period}` : '—'}</Table.Td>
                <Table.Td>
                  {k.expires_at ? (
                    new Date(k.expires_at).toLocaleString()
                  ) : (
                    <Badge variant="light" color="gray">
                      never
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap={4} justify="flex-end" wrap="nowrap">
                    <Button size="compact-sm" variant="subtle" component={Link} to={`/usage?key=${k.id}`}>
                      Usage
                    </Button>
                    <Button
                      size="compact-sm"
                      variant="subtle"
                      onClick={() => setEditing(k)}
                      aria-label={`Edit ${k.name}`}
                    >
                      Edit
                    </Button>
                    <DeleteButton
                      what={k.name}
                      label="Rotate"
                      explain="A new secret replaces the current one, which stops working at once."
                      onDelete={() =>
                        rotate.mutateAsync(k.id).then((r) => setSecret({ name: k.name, value: r.secret_key }))
                      }
                    />
                    <DeleteButton
                      what={k.name}
                      label="Revoke"
                      explain="The secret stops working at once. Its usage stays readable; the name can be reused."
                      onDelete={() => revoke.mutateAsync(k.id)}
                    />
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="virtual key" onClose={() => setEditing(null)} size="xl">
        {(item) => (
          <KeyForm
            vkey={item}
            onDone={() => setEditing(null)}
            onCreated={(k) => {
              setEditing(null);
              setSecret({ name: k.name, value: k.secret_key });
            }}
          />
        )}
      </EditModal>
      <SecretModal secret={secret?.value ?? null} name={secret?.name ?? ''} onClose={() => setSecret(null)} />
    </>
  );
}
