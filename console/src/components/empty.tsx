import { Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** An empty list says what it would show and what to do next. */
export function Empty({
  title,
  children,
  action,
}: {
  title: string;
  children: ReactNode;
  action?: ReactNode;
}) {
  return (
    <Paper withBorder p="xl" radius="md">
      <Stack align="flex-start" gap="xs">
        <Title order={5}>{title}</Title>
        <Text size="sm" c="dimmed">
          {children}
        </Text>
        {action}
      </Stack>
    </Paper>
  );
}
