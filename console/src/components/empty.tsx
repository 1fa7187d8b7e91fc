import { Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** A block with a title, a line or two of text, and its action (a button, a link). */
export interface TitledProps {
  title: string;
  children: ReactNode;
  action?: ReactNode;
}

/** An empty list says what it would show and what to do next. */
export function Empty({ title, children, action }: TitledProps) {
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
