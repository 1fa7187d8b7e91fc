import { Button, Checkbox, Group, NumberInput, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import type { Provider, ProviderBody } from '../../../api/types.js';
import { fieldError, fieldErrorUnder, unplacedError } from '../shared/form.js';
import { fromPairs, KeyValues, toPairs } from '../shared/key-values.js';
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

/** Create or edit a provider. The API key is write-only: it is never read back, only its last 4 characters. */
export function ProviderForm({ provider, onDone }: { provider?: Provider; onDone: () => void }) {
  const save = useSaveProvider(provider?.id);
  const [name, setName] = useState(provider?.name ?? '');
  const [type, setType] = useState<string>(provider?.provider_type ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(provider?.base_url ?? '');
  const [apiKey, setApiKey] = useState('');
  const [clearKey, setClearKey] = useState(false);
  const [headers, setHeaders] = useState(toPairs(provider?.headers));
  const [connect, setConnect] = useState<string | number>(provider?.connect_timeout_ms ?? '');
  const [timeout, setTimeoutMs] = useState<string | number>(provider?.timeout_ms ?? '');
  const err = save.error;

  const submit = () => {
    const body: Partial<ProviderBody> = {
      name: name.trim(),
      provider_type: type as ProviderBody['provider_type'],
      base_url: baseUrl.trim() === '' ? null : baseUrl.trim(),
      headers: fromPairs(headers),
    };
    if (apiKey) body.api_key = apiKey;
    else if (clearKey) body.api_key = null;
    if (connect !== '') body.connect_timeout_ms = Number(connect);
    if (timeout !== '') body.timeout_ms = Number(timeout);
    save.mutate(body, { onSuccess: onDone });
  };

  const keyHint = provider?.has_api_key
    ? `Stored: ••••${provider.api_key_last4 ?? ''}. Leave empty to keep it; type a new one to replace it.`
    : 'Write-only: stored encrypted, never shown again.';

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Stack>
        <TextInput
          label="Name"
          description="Slug-like: it is the first part of gateway model names (<provider>/<model>)"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(err, 'name')}
          data-autofocus
        />
        <Select
          label="Provider type"
          data={[...TYPES]}
          value={type}
          onChange={(v) => v && setType(v)}
          allowDeselect={false}
          error={fieldError(err, 'provider_type')}
        />
        <TextInput
          label="Base URL"
          description="What the vendor's SDK takes as base URL; empty for the vendor's own"
          placeholder="https://api.openai.com/v1"
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.currentTarget.value)}
          error={fieldError(err, 'base_url')}
        />
        <PasswordInput
          label="API key"
          description={keyHint}
          autoComplete="off"
          value={apiKey}
          onChange={(e) => setApiKey(e.currentTarget.value)}
          error={fieldError(err, 'api_key')}
        />
        {provider?.has_api_key && (
          <Checkbox
            label="Remove the stored key"
            checked={clearKey}
            disabled={apiKey !== ''}
            onChange={(e) => setClearKey(e.currentTarget.checked)}
          />
        )}
        <KeyValues
          label="Headers"
          description="Extra request headers; sensitive values read back as [redacted] and are kept if left so"
          value={headers}
          onChange={setHeaders}
          error={fieldErrorUnder(err, 'headers')}
        />
        <Group grow>
          <NumberInput
            label="Connect timeout (ms)"
            placeholder="10000"
            min={1}
            value={connect}
            onChange={setConnect}
            error={fieldError(err, 'connect_timeout_ms')}
          />
          <NumberInput
            label="Timeout (ms)"
            placeholder="600000"
            min={1}
            value={timeout}
            onChange={setTimeoutMs}
            error={fieldError(err, 'timeout_ms')}
          />
        </Group>
        <ErrorAlert error={unplacedError(err, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {provider ? 'Save provider' : 'Create provider'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
