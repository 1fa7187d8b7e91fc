import { ActionIcon, Button, Group, Input, Select, Stack, TagsInput } from '@mantine/core';
import { useProviders } from '../providers/queries.js';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';

export interface GrantDraft {
  provider_id: string | null;
  model_names: string[];
}

/** Which providers the key may call, and which of their models (`*` = all). */
export function Grants({
  value,
  onChange,
  err,
}: {
  value: GrantDraft[];
  onChange: (g: GrantDraft[]) => void;
  err: unknown;
}) {
  const providers = useProviders();
  const taken = value.map((g) => g.provider_id);
  const set = (i: number, g: GrantDraft) => onChange(value.map((x, j) => (j === i ? g : x)));
  return (
    <Input.Wrapper
      label="Grants"
      description="Providers this key may call and their model ids; * grants every model"
      error={fieldError(err, 'providers')}
      required
    >
      <Stack gap={6} mt={4}>
        {value.map((g, i) => (
          <Group key={i} align="flex-start" wrap="nowrap">
            <Select
              aria-label={`Grant ${i + 1} provider`}
              placeholder={providers.data?.length ? 'Provider' : 'No provider yet'}
              data={(providers.data ?? []).map((p) => ({
                value: p.id,
                label: p.name,
                disabled: taken.includes(p.id) && p.id !== g.provider_id,
              }))}
              value={g.provider_id}
              onChange={(v) => set(i, { ...g, provider_id: v })}
              error={fieldErrorUnder(err, `providers.${i}.provider_id`) ?? fieldError(err, `providers.${i}`)}
              style={{ flex: 1 }}
            />
            <TagsInput
              aria-label={`Grant ${i + 1} models`}
              placeholder="Model ids, Enter after each"
              value={g.model_names}
              onChange={(v) => set(i, { ...g, model_names: v })}
              error={fieldErrorUnder(err, `providers.${i}.model_names`)}
              style={{ flex: 2 }}
            />
            <ActionIcon
              mt={6}
              variant="subtle"
              color="gray"
              aria-label={`Remove grant ${i + 1}`}
              onClick={() => onChange(value.filter((_, j) => j !== i))}
            >
              ×
            </ActionIcon>
          </Group>
        ))}
        <Button
          size="compact-xs"
          variant="light"
          w="fit-content"
          onClick={() => onChange([...value, { provider_id: null, model_names: ['*'] }])}
        >
          Add grant
        </Button>
      </Stack>
    </Input.Wrapper>
  );
}
