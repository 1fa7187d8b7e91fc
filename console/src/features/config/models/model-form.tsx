import { Group, JsonInput, NumberInput, Select, TextInput } from '@mantine/core';
import { useState } from 'react';
import type { Model, ModelBody } from '../../../api/types.js';
import { fieldError } from '../../../components/field-errors.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { useProviders } from '../providers/queries.js';
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

const draftOf = (model: Model | undefined) => ({
  name: model?.name ?? '',
  model_id: model?.model_id ?? '',
  provider_type: model?.provider_type ?? 'openai',
  provider_id: model?.provider_id ?? null,
  parameters: model && Object.keys(model.parameters).length ? JSON.stringify(model.parameters, null, 2) : '',
  input: (model?.pricing?.input_per_million_usd ?? '') as string | number,
  output: (model?.pricing?.output_per_million_usd ?? '') as string | number,
  max_output_tokens: (model?.max_output_tokens ?? '') as string | number,
});
type ModelDraft = ReturnType<typeof draftOf>;

function bodyOf(d: ModelDraft, parameters: Record<string, unknown> | undefined): Partial<ModelBody> {
  const pricing =
    d.input === '' && d.output === ''
      ? null
      : { input_per_million_usd: Number(d.input || 0), output_per_million_usd: Number(d.output || 0) };
  return {
    name: d.name.trim(),
    model_id: d.model_id.trim(),
    provider_type: d.provider_type,
    provider_id: d.provider_id,
    parameters: parameters ?? {},
    pricing,
    max_output_tokens: d.max_output_tokens === '' ? null : Number(d.max_output_tokens),
  };
}

/**
 * With several providers of the type nothing could choose one at call time,
 * so the API refuses a model without one: the field says so before it does.
 */
function providerHint(ofType: number): string {
  if (ofType > 1) return `Required: ${ofType} providers of this type exist`;
  if (ofType === 1) return 'Empty: the only provider of this type serves it';
  return 'Empty: the only provider of this type, once there is one';
}

/** Create or edit a model: the provider-side id, which provider serves it, sampling parameters, pricing. */
export function ModelForm({ projectId, item: model, onDone }: ItemFormProps<Model>) {
  const save = useSaveModel(projectId, model?.id);
  const providers = useProviders();
  const err = save.error;
  const f = useFields<ModelDraft>(() => draftOf(model), err);
  const [paramsError, setParamsError] = useState<string>();

  const submit = () => {
    const parsed = parseObject(f.values.parameters);
    if (parsed === 'invalid') return setParamsError('Parameters must be a JSON object');
    setParamsError(undefined);
    save.mutate(bodyOf(f.values, parsed), { onSuccess: onDone });
  };

  const type = f.values.provider_type;
  const ofType = (providers.data ?? []).filter((p) => p.provider_type === type);
  const params = f.value('parameters');
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={model ? 'Save model' : 'Create model'}
      onCancel={onDone}
    >
      <TextInput
        label="Name"
        description="How agents of this project refer to it"
        required
        {...f.text('name')}
        data-autofocus
      />
      <TextInput
        label="Model id"
        description="The provider-side identifier, e.g. gpt-4o-mini"
        required
        {...f.text('model_id')}
      />
      <Group grow align="flex-start">
        <Select
          label="Provider type"
          data={[...TYPES]}
          value={type}
          onChange={(v) => v && f.set({ provider_type: v, provider_id: null })}
          allowDeselect={false}
          error={fieldError(err, 'provider_type')}
        />
        <Select
          label="Provider"
          description={providerHint(ofType.length)}
          placeholder={
            ofType.length > 1 ? 'Choose one' : ofType.length ? 'The only one of this type' : 'None yet'
          }
          data={ofType.map((p) => ({ value: p.id, label: p.name }))}
          required={ofType.length > 1}
          clearable={ofType.length < 2}
          {...f.value('provider_id')}
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
        {...params}
        error={paramsError ?? params.error}
      />
      <Group grow align="flex-start">
        <NumberInput
          label="Input price (USD per 1M tokens)"
          min={0}
          decimalScale={6}
          {...f.value('input', 'pricing.input_per_million_usd')}
          error={fieldError(err, 'pricing.input_per_million_usd') ?? fieldError(err, 'pricing')}
        />
        <NumberInput
          label="Output price (USD per 1M tokens)"
          min={0}
          decimalScale={6}
          {...f.value('output', 'pricing.output_per_million_usd')}
        />
      </Group>
      <NumberInput
        label="Max output tokens"
        description="The most one answer may hold: what a budgeted call without max_tokens reserves (empty: the known models' table)"
        min={1}
        allowDecimal={false}
        {...f.value('max_output_tokens')}
      />
    </ResourceForm>
  );
}
