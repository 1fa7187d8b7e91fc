import { Checkbox, Group, NumberInput, PasswordInput, Select, TextInput } from '@mantine/core';
import type { Provider, ProviderBody } from '../../../api/types.js';
import { fieldError } from '../../../components/field-errors.js';
import { ResourceForm, useFields } from '../../../components/resource-form.js';
import { fromPairs, KeyValues, toPairs, type Pairs } from '../shared/key-values.js';
import { useSaveProvider } from './queries.js';

const TYPES = ['openai', 'anthropic', 'gemini'] as const;
const PLACED = [
  'name',
  'provider_type',
  'base_url',
  'api_key',
  'headers',
  'connect_timeout_ms',
  'timeout_ms',
];

interface ProviderDraft {
  name: string;
  provider_type: ProviderBody['provider_type'];
  base_url: string;
  api_key: string;
  clear_key: boolean;
  headers: Pairs;
  connect_timeout_ms: string | number;
  timeout_ms: string | number;
}

const draftOf = (p: Provider | undefined): ProviderDraft => ({
  name: p?.name ?? '',
  provider_type: p?.provider_type ?? 'openai',
  base_url: p?.base_url ?? '',
  api_key: '',
  clear_key: false,
  headers: toPairs(p?.headers),
  connect_timeout_ms: p?.connect_timeout_ms ?? '',
  timeout_ms: p?.timeout_ms ?? '',
});

/** The key is sent only when typed (or cleared on purpose); empty timeouts are left to the server. */
function bodyOf(d: ProviderDraft): Partial<ProviderBody> {
  const body: Partial<ProviderBody> = {
    name: d.name.trim(),
    provider_type: d.provider_type,
    base_url: d.base_url.trim() === '' ? null : d.base_url.trim(),
    headers: fromPairs(d.headers),
  };
  if (d.api_key) body.api_key = d.api_key;
  else if (d.clear_key) body.api_key = null;
  if (d.connect_timeout_ms !== '') body.connect_timeout_ms = Number(d.connect_timeout_ms);
  if (d.timeout_ms !== '') body.timeout_ms = Number(d.timeout_ms);
  return body;
}

/** Create or edit a provider. The API key is write-only: it is never read back, only its last 4 characters. */
export function ProviderForm({ provider, onDone }: { provider?: Provider; onDone: () => void }) {
  const save = useSaveProvider(provider?.id);
  const f = useFields(() => draftOf(provider), save.error);
  const keyHint = provider?.has_api_key
    ? `Stored: ••••${provider.api_key_last4 ?? ''}. Leave empty to keep it; type a new one to replace it.`
    : 'Write-only: stored encrypted, never shown again.';

  return (
    <ResourceForm
      onSubmit={() => save.mutate(bodyOf(f.values), { onSuccess: onDone })}
      save={save}
      placed={PLACED}
      submitLabel={provider ? 'Save provider' : 'Create provider'}
      onCancel={onDone}
    >
      <TextInput
        label="Name"
        description="Slug-like: it is the first part of gateway model names (<provider>/<model>)"
        required
        {...f.text('name')}
        data-autofocus
      />
      <Select
        label="Provider type"
        data={[...TYPES]}
        value={f.values.provider_type}
        onChange={(v) => v && f.set({ provider_type: v })}
        allowDeselect={false}
        error={fieldError(save.error, 'provider_type')}
      />
      <TextInput
        label="Base URL"
        description="What the vendor's SDK takes as base URL; empty for the vendor's own"
        placeholder="https://api.openai.com/v1"
        {...f.text('base_url')}
      />
      <PasswordInput label="API key" description={keyHint} autoComplete="off" {...f.text('api_key')} />
      {provider?.has_api_key && (
        <Checkbox
          label="Remove the stored key"
          checked={f.values.clear_key}
          disabled={f.values.api_key !== ''}
          onChange={(e) => f.set({ clear_key: e.currentTarget.checked })}
        />
      )}
      <KeyValues
        label="Headers"
        description="Extra request headers; sensitive values read back as [redacted] and are kept if left so"
        {...f.value('headers')}
      />
      <Group grow>
        <NumberInput
          label="Connect timeout (ms)"
          placeholder="10000"
          min={1}
          {...f.value('connect_timeout_ms')}
        />
        <NumberInput label="Timeout (ms)" placeholder="600000" min={1} {...f.value('timeout_ms')} />
      </Group>
    </ResourceForm>
  );
}
