import { Button, Group, Text } from '@mantine/core';

/** Newer/older paging over limit/offset lists (the API gives no totals). */
export function Pager({
  offset,
  pageSize,
  count,
  onChange,
}: {
  offset: number;
  pageSize: number;
  count: number;
  onChange: (offset: number) => void;
}) {
  if (offset === 0 && count < pageSize) return null;
  return (
    <Group gap="xs" justify="flex-end">
      <Text size="xs" c="dimmed">
        {count ? `${offset + 1}–${offset + count}` : 'none'}
      </Text>
      <Button
        size="xs"
        variant="default"
        disabled={offset === 0}
        onClick={() => onChange(Math.max(0, offset - pageSize))}
      >
        Newer
      </Button>
      <Button
        size="xs"
        variant="default"
        disabled={count < pageSize}
        onClick={() => onChange(offset + pageSize)}
      >
        Older
      </Button>
    </Group>
  );
}
