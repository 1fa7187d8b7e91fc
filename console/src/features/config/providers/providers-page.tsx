import { Badge, Code, Text } from '@mantine/core';
import type { Provider } from '../../../api/types.js';
import { ResourcePage } from '../shared/resource-page.js';
import { ProviderForm } from './provider-form.js';
import { useDeleteProvider, useProviders } from './queries.js';

/** The API key as the API shows it: masked, with its last 4 characters when long enough. */
function maskedKey(p: Provider) {
  if (!p.has_api_key) return <Text c="dimmed">none</Text>;
  return <Code>{`••••••••${p.api_key_last4 ?? ''}`}</Code>;
}

export function ProvidersPage() {
  return (
    <ResourcePage<Provider>
      need="org:admin"
      title="Providers"
      what="provider"
      intro="Vendor accounts the gateway and the agents call. Global: every project uses the same providers."
      query={useProviders()}
      empty={{
        title: 'No provider yet',
        body: 'Add a provider (OpenAI, Anthropic, Gemini, or any OpenAI-compatible endpoint) with its API key, then define models on it.',
      }}
      columns={[
        { header: 'Type', cell: (p) => <Badge variant="light">{p.provider_type}</Badge> },
        {
          header: 'Base URL',
          cell: (p) => (p.base_url ? <Code>{p.base_url}</Code> : <Text c="dimmed">vendor default</Text>),
        },
        { header: 'API key', cell: maskedKey },
        {
          header: 'Timeouts',
          cell: (p) => (
            <Text size="xs">
              connect {p.connect_timeout_ms} ms · total {p.timeout_ms} ms
            </Text>
          ),
        },
      ]}
      remove={useDeleteProvider()}
      form={(item, close) => <ProviderForm provider={item} onDone={close} />}
    />
  );
}
