import { Button, Group, NumberInput, Select, Stack, TagsInput, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import type { VirtualKey, VirtualKeyBody, VirtualKeyWithSecret } from '../../../api/types.js';
import { fieldError, fieldErrorUnder, numberOrNull, unplacedError } from '../shared/form.js';
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
  const [name, setName] = useState(vkey?.name ?? '');
  const [grants, setGrants] = useState<GrantDraft[]>(
    vkey?.providers.map((g) => ({
      provider_id: g.provider_id ?? null,
      model_names: g.model_names ?? [],
    })) ?? [{ provider_id: null, model_names: ['*'] }],
  );
  const [expires, setExpires] = useState(toLocalInput(vkey?.expires_at ?? null));
  const [rpm, setRpm] = useState<string | number>(vkey?.rate_limit?.requests_per_minute ?? '');
  const [tpm, setTpm] = useState<string | number>(vkey?.rate_limit?.tokens_per_minute ?? '');
  const [maxUsd, setMaxUsd] = useState<string | number>(vkey?.budget?.max_usd ?? '');
  const [period, setPeriod] = useState<string | null>(vkey?.budget?.period ?? 'month');
  const [fallbacks, setFallbacks] = useState<string[]>(vkey?.fallbacks ?? []);
  const err = save.error;

  const submit = () => {
    const r = numberOrNull(rpm);
    const t = numberOrNull(tpm);
    const rate_limit =
      r === null && t === null
        ? null
        : { ...(r !== null && { requests_per_minute: r }), ...(t !== null && { tokens_per_minute: t }) };
    const max = numberOrNull(maxUsd);
    const body: Partial<VirtualKeyBody> = {
      name: name.trim(),
      providers: grants.map((g) => ({ provider_id: g.provider_id ?? '', model_names: g.model_names })),
      expires_at: expires ? new Date(expires).toISOString() : null,
      rate_limit,
      budget: max === null ? null : { max_usd: max, period: (period ?? 'month') as 'month' },
      fallbacks,
    };
    save.mutate(body, {
      onSuccess: (saved) => {
        if (!vkey) onCreated(saved as VirtualKeyWithSecret);
        else onDone();
      },
    });
  };

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
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(err, 'name')}
          data-autofocus
        />
        <Grants value={grants} onChange={setGrants} err={err} />
        <TextInput
          type="datetime-local"
          label="Expires at"
          description="Empty: never (your local time)"
          value={expires}
          onChange={(e) => setExpires(e.currentTarget.value)}
          error={fieldError(err, 'expires_at')}
        />
        <Group grow align="flex-start">
          <NumberInput
            label="Requests per minute"
            placeholder="unlimited"
            min={1}
            value={rpm}
            onChange={setRpm}
            error={fieldError(err, 'rate_limit.requests_per_minute') ?? fieldError(err, 'rate_limit')}
          />
          <NumberInput
            label="Tokens per minute"
            placeholder="unlimited"
            min={1}
            value={tpm}
            onChange={setTpm}
            error={fieldError(err, 'rate_limit.tokens_per_minute')}
          />
        </Group>
        <Group grow align="flex-start">
          <NumberInput
            label="Budget (USD)"
            placeholder="no budget"
            min={0}
            decimalScale={4}
            prefix="$"
            value={maxUsd}
            onChange={setMaxUsd}
            error={fieldError(err, 'budget.max_usd') ?? fieldError(err, 'budget')}
          />
          <Select
            label="Budget period"
            data={PERIODS}
            value={period}
            onChange={setPeriod}
            allowDeselect={false}
            error={fieldError(err, 'budget.period')}
          />
        </Group>
        <TagsInput
          label="Fallbacks"
          description="Tried in order when a call fails: <provider name>/<model id>, Enter after each"
          value={fallbacks}
          onChange={setFallbacks}
          error={fieldErrorUnder(err, 'fallbacks')}
        />
        <ErrorAlert error={unplacedError(err, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {vkey ? 'Save key' : 'Create key'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
