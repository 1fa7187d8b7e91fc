import { Loader, Stack, Text } from '@mantine/core';
import { useEffect, useState } from 'react';

/** A spinner that says so when it has taken too long (no spinner without a timeout message). */
export function Loading({ what = 'Loading' }: { what?: string }) {
  const [slow, setSlow] = useState(false);
  useEffect(() => {
    const t = setTimeout(() => setSlow(true), 8_000);
    return () => clearTimeout(t);
  }, []);
  return (
    <Stack align="center" p="xl" gap="xs">
      <Loader size="sm" />
      <Text size="sm" c="dimmed">
        {slow ? `${what} is taking longer than usual: is the API reachable?` : `${what}…`}
      </Text>
    </Stack>
  );
}
