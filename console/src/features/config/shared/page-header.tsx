import { Group, Stack, Text, Title } from '@mantine/core';
import type { TitledProps } from '../../../components/empty.js';

/** A tab's title, what it configures, and its main action. */
export function PageHeader({ title, children, action }: TitledProps) {
  return (
    <Group justify="space-between" align="flex-start" mb="md">
      <Stack gap={2}>
        <Title order={4}>{title}</Title>
        <Text size="sm" c="dimmed" maw={720}>
          {children}
        </Text>
      </Stack>
      {action}
    </Group>
  );
}
