import { Badge, Button, Code, Text } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import type { VirtualKey } from '../../../api/types.js';
import { formatUsd } from '../../../lib/money.js';
import { useProviders } from '../providers/queries.js';
import { DeleteButton } from '../shared/delete-button.js';
import { ResourcePage } from '../shared/resource-page.js';
import { KeyForm } from './key-form.js';
import { useRevokeVirtualKey, useRotateVirtualKey, useVirtualKeys } from './queries.js';
import { SecretModal } from './secret-modal.js';

function limits(k: VirtualKey): string {
  const parts = [];
  if (k.rate_limit?.requests_per_minute) parts.push(`${k.rate_limit.requests_per_minute} req/min`);
  if (k.rate_limit?.tokens_per_minute) parts.push(`${k.rate_limit.tokens_per_minute} tok/min`);
  return parts.join(' · ') || '—';
}

function expiry(k: VirtualKey) {
  if (k.expires_at) return new Date(k.expires_at).toLocaleString();
  return (
    <Badge variant="light" color="gray">
      never
    </Badge>
  );
}

export function KeysPage() {
  const providers = useProviders();
  const rotate = useRotateVirtualKey();
  const revoke = useRevokeVirtualKey();
  // The secret lives here only while its dialog is open.
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const providerName = (id: string) => providers.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <ResourcePage<VirtualKey>
      need="org:admin"
      title="Virtual keys"
      what="virtual key"
      intro="Keys applications present to the gateway: which providers and models they may call, rate limits, budgets and fallbacks. The secret is shown once."
      query={useVirtualKeys()}
      empty={{
        title: 'No virtual key yet',
        body: "Create a virtual key granting a provider's models, then call the gateway with its secret.",
      }}
      columns={[
        { header: 'Key', cell: (k) => <Code>{`${k.key_prefix}…`}</Code> },
        {
          header: 'Grants',
          cell: (k) =>
            k.providers.map((g) => (
              <Text size="sm" key={g.provider_id}>
                {providerName(g.provider_id ?? '')}: {(g.model_names ?? []).join(', ')}
              </Text>
            )),
        },
        { header: 'Rate limit', cell: limits },
        {
          header: 'Budget',
          cell: (k) => (k.budget ? `${formatUsd(k.budget.max_usd)} / ${k.budget.period}` : '—'),
        },
        { header: 'Expires', cell: expiry },
      ]}
      rowExtras={(k) => (
        <Button size="compact-sm" variant="subtle" component={Link} to={`/usage?key=${k.id}`}>
          Usage
        </Button>
      )}
      rowRemove={(k) => (
        <>
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
        </>
      )}
      modalSize="xl"
      form={(item, close) => (
        <KeyForm
          vkey={item}
          onDone={close}
          onCreated={(k) => {
            close();
            setSecret({ name: k.name, value: k.secret_key });
          }}
        />
      )}
    >
      <SecretModal secret={secret?.value ?? null} name={secret?.name ?? ''} onClose={() => setSecret(null)} />
    </ResourcePage>
  );
}
