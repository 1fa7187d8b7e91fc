import { Group, NumberInput, Select, TagsInput, TextInput } from '@mantine/core';
import type { VirtualKey, VirtualKeyBody, VirtualKeyWithSecret } from '../../../api/types.js';
import { fieldError, numberOrNull } from '../../../components/field-errors.js';
import { ResourceForm, useFields } from '../../../components/resource-form.js';
import { Grants, type GrantDraft } from './grants.js';
import { useSaveVirtualKey } from './queries.js';

const PLACED = ['name', 'providers', 'expires_at', 'rate_limit', 'budget', 'fallbacks'];
const PERIODS = ['day', 'week', 'month', 'total'];

/** An ISO time as a datetime-local input shows it (local time, minutes). */
function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

interface KeyDraft {
  name: string;
  providers: GrantDraft[];
  expires_at: string;
  rpm: string | number;
  tpm: string | number;
  max_usd: string | number;
  period: string | null;
  fallbacks: string[];
}

const draftOf = (k: VirtualKey | undefined): KeyDraft => ({
  name: k?.name ?? '',
  providers: k?.providers.map((g) => ({
    provider_id: g.provider_id ?? null,
    model_names: g.model_names ?? [],
  })) ?? [{ provider_id: null, model_names: ['*'] }],
  expires_at: toLocalInput(k?.expires_at ?? null),
  rpm: k?.rate_limit?.requests_per_minute ?? '',
  tpm: k?.rate_limit?.tokens_per_minute ?? '',
  max_usd: k?.budget?.max_usd ?? '',
  period: k?.budget?.period ?? 'month',
  fallbacks: k?.fallbacks ?? [],
});

/** Empty limits are left out: no rate limit, no budget. */
function bodyOf(d: KeyDraft): Partial<VirtualKeyBody> {
  const r = numberOrNull(d.rpm);
  const t = numberOrNull(d.tpm);
  const rate_limit =
    r === null && t === null
      ? null
      : { ...(r !== null && { requests_per_minute: r }), ...(t !== null && { tokens_per_minute: t }) };
  const max = numberOrNull(d.max_usd);
  return {
    name: d.name.trim(),
    providers: d.providers.map((g) => ({ provider_id: g.provider_id ?? '', model_names: g.model_names })),
    expires_at: d.expires_at ? new Date(d.expires_at).toISOString() : null,
    rate_limit,
    budget: max === null ? null : { max_usd: max, period: (d.period ?? 'month') as 'month' },
    fallbacks: d.fallbacks,
  };
}

/** Create or edit a virtual key: grants, expiry, rate limit, budget, fallbacks. */
export function KeyForm({
  vkey,
  onDone,
  onCreated,
}: {
  vkey?: VirtualKey;
  onDone: () => void;
  onCreated: (k: VirtualKeyWithSecret) => void;
}) {
  const save = useSaveVirtualKey(vkey?.id);
  const err = save.error;
  const f = useFields(() => draftOf(vkey), err);
  const submit = () =>
    save.mutate(bodyOf(f.values), {
      onSuccess: (saved) => {
        if (!vkey) onCreated(saved as VirtualKeyWithSecret);
        else onDone();
      },
    });

  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={vkey ? 'Save key' : 'Create key'}
      onCancel={onDone}
    >
      <TextInput label="Name" required {...f.text('name')} data-autofocus />
      <Grants value={f.values.providers} onChange={(providers) => f.set({ providers })} err={err} />
      <TextInput
        type="datetime-local"
        label="Expires at"
        description="Empty: never (your local time)"
        {...f.text('expires_at')}
      />
      <Group grow align="flex-start">
        <NumberInput
          label="Requests per minute"
          placeholder="unlimited"
          min={1}
          {...f.value('rpm')}
          error={fieldError(err, 'rate_limit.requests_per_minute') ?? fieldError(err, 'rate_limit')}
        />
        <NumberInput
          label="Tokens per minute"
          placeholder="unlimited"
          min={1}
          {...f.value('tpm', 'rate_limit.tokens_per_minute')}
        />
      </Group>
      <Group grow align="flex-start">
        <NumberInput
          label="Budget (USD)"
          placeholder="no budget"
          min={0}
          decimalScale={4}
          prefix="$"
          {...f.value('max_usd')}
          error={fieldError(err, 'budget.max_usd') ?? fieldError(err, 'budget')}
        />
        <Select
          label="Budget period"
          data={PERIODS}
          allowDeselect={false}
          {...f.value('period', 'budget.period')}
        />
      </Group>
      <TagsInput
        label="Fallbacks"
        description="Tried in order when a call fails: <provider name>/<model id>, Enter after each"
        {...f.value('fallbacks')}
      />
    </ResourceForm>
  );
}
