import { ActionIcon, Button, Group, Input, Stack, TextInput } from '@mantine/core';

export type Pairs = Array<[string, string]>;

export const toPairs = (o: Record<string, string> | null | undefined): Pairs => Object.entries(o ?? {});
export const fromPairs = (p: Pairs): Record<string, string> =>
  Object.fromEntries(p.filter(([k]) => k.trim() !== '').map(([k, v]) => [k.trim(), v]));

/** Header name/value rows; sensitive values read back as "[redacted]" and are kept when sent back unchanged. */
export function KeyValues({
  label,
  description,
  value,
  onChange,
  error,
}: {
  label: string;
  description?: string;
  value: Pairs;
  onChange: (next: Pairs) => void;
  error?: string;
}) {
  const set = (i: number, at: 0 | 1, text: string) =>
    onChange(value.map((p, j) => (j === i ? (at === 0 ? [text, p[1]] : [p[0], text]) : p)));
  return (
    <Input.Wrapper label={label} description={description} error={error}>
      <Stack gap={6} mt={4}>
        {value.map(([k, v], i) => (
          <Group key={i} gap={6} wrap="nowrap">
            <TextInput
              aria-label={`${label} name ${i + 1}`}
              placeholder="Name"
              value={k}
              onChange={(e) => set(i, 0, e.currentTarget.value)}
              style={{ flex: 1 }}
            />
            <TextInput
              aria-label={`${label} value ${i + 1}`}
              placeholder="Value"
              value={v}
              onChange={(e) => set(i, 1, e.currentTarget.value)}
              style={{ flex: 2 }}
            />
            <ActionIcon
              variant="subtle"
              color="gray"
              aria-label={`Remove ${label.toLowerCase()} ${k || i + 1}`}
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
          onClick={() => onChange([...value, ['', '']])}
        >
          Add {label.toLowerCase().replace(/s$/, '')}
        </Button>
      </Stack>
    </Input.Wrapper>
  );
}
