import { Button, Group, JsonInput, NumberInput, Select, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import { useProviders } from '../providers/queries.js';
import type { Model, ModelBody } from '../../../api/types.js';
import { fieldError, fieldErrorUnder, unplacedError } from '../shared/form.js';
import { useSaveModel } from './queries.js';

const TYPES = ['openai', 'anthropic', 'gemini'] as const;
const PLACED = [
  'name',
  'model_id',
  'provider_type',
  'provider_id',
  'parameters',
  'pricing',
  'max_output_tokens',
];

function parseObject(text: string): Record<string, unknown> | undefined | 'invalid' {
  if (text.trim() === '') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** Create or edit a model: the provider-side id, which provider serves it, sampling parameters, pricing. */
export function ModelForm({
  projectId,
  model,
  onDone,
}: {
  projectId: string;
  model?: Model;
  onDone: () => void;
}) {
  const save = useSaveModel(projectId, model?.id);
  const providers = useProviders();
  const [name, setName] = useState(model?.name ?? '');
  const [modelId, setModelId] = useState(model?.model_id ?? '');
  const [type, setType] = useState<string>(model?.provider_type ?? 'openai');
  const [providerId, setProviderId] = useState<string | null>(model?.provider_id ?? null);
  const [params, setParams] = useState(
    model && Object.keys(model.parameters).length ? JSON.stringify(model.parameters, null, 2) : '',
  );
  const [input, setInput] = useState<string | number>(model?.pricing?.input_per_million_usd ?? '');
  const [output, setOutput] = useState<string | number>(model?.pricing?.output_per_million_usd ?? '');
  const [maxOutput, setMaxOutput] = useState<string | number>(model?.max_output_tokens ?? '');
  const [paramsError, setParamsError] = useState<string>();
  const err = save.error;

  const submit = () => {
    const parsed = parseObject(params);
    if (parsed === 'invalid') return setParamsError('Parameters must be a JSON object');
    setParamsError(undefined);
    const pricing =
      input === '' && output === ''
        ? null
        : { input_per_million_usd: Number(input || 0), output_per_million_usd: Number(output || 0) };
    const body: Partial<ModelBody> = {
      name: name.trim(),
      model_id: modelId.trim(),
      provider_type: type as ModelBody['provider_type'],
      provider_id: providerId,
      parameters: parsed ?? {},
      pricing,
      max_output_tokens: maxOutput === '' ? null : Number(maxOutput),
    };
    save.mutate(body, { onSuccess: onDone });
  };

  const ofType = (providers.data ?? []).filter((p) => p.provider_type === type);
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
          description="How agents of this project refer to it"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(err, 'name')}
          data-autofocus
        />
        <TextInput
          label="Model id"
          description="The provider-side identifier, e.g. gpt-4o-mini"
          required
          value={modelId}
          onChange={(e) => setModelId(e.currentTarget.value)}
          error={fieldError(err, 'model_id')}
        />
        <Group grow align="flex-start">
          <Select
            label="Provider type"
            data={[...TYPES]}
            value={type}
            onChange={(v) => {
              if (!v) return;
              setType(v);
              setProviderId(null);
            }}
            allowDeselect={false}
            error={fieldError(err, 'provider_type')}
          />
          <Select
            label="Provider"
            description="Empty: the only provider of this type"
            placeholder={ofType.length ? 'Any of this type' : 'No provider of this type'}
            data={ofType.map((p) => ({ value: p.id, label: p.name }))}
            value={providerId}
            onChange={setProviderId}
            clearable
            error={fieldError(err, 'provider_id')}
          />
        </Group>
        <JsonInput
          label="Parameters"
          description="Sampling parameters (temperature, max_tokens, …); other keys go to the vendor as they are"
          placeholder='{ "temperature": 0.2 }'
          autosize
          minRows={3}
          formatOnBlur
          validationError="Not valid JSON"
          value={params}
          onChange={setParams}
          error={paramsError ?? fieldErrorUnder(err, 'parameters')}
        />
        <Group grow align="flex-start">
          <NumberInput
            label="Input price (USD per 1M tokens)"
            min={0}
            decimalScale={6}
            value={input}
            onChange={setInput}
            error={fieldError(err, 'pricing.input_per_million_usd') ?? fieldError(err, 'pricing')}
          />
          <NumberInput
            label="Output price (USD per 1M tokens)"
            min={0}
            decimalScale={6}
            value={output}
            onChange={setOutput}
            error={fieldError(err, 'pricing.output_per_million_usd')}
          />
        </Group>
        <NumberInput
          label="Max output tokens"
          description="The most one answer may hold: what a budgeted call without max_tokens reserves (empty: the known models' table)"
          min={1}
          allowDecimal={false}
          value={maxOutput}
          onChange={setMaxOutput}
          error={fieldError(err, 'max_output_tokens')}
        />
        <ErrorAlert error={unplacedError(err, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {model ? 'Save model' : 'Create model'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
