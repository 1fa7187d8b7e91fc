import { Badge, Button, Group, Paper, Select, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../components/error-alert.js';
import type { Prompt, PromptVersion } from '../../api/types.js';
import { useMoveLabel } from './queries.js';

/** Where the labels sit; `production` moves to any version, `latest` always follows the newest. */
export function LabelsPanel({
  projectId,
  prompt,
  versions,
}: {
  projectId: string;
  prompt: Prompt;
  versions: PromptVersion[];
}) {
  const move = useMoveLabel(projectId, prompt.name);
  const current = prompt.labels.production ?? null;
  const [target, setTarget] = useState<string | null>(null);
  const options = versions.map((v) => ({
    value: String(v.version),
    label: `v${v.version}: ${v.commit_message}`,
  }));
  return (
    <Paper withBorder p="md">
      <Stack gap="sm">
        <Group gap="xs">
          <Text fw={500}>production</Text>
          {current ? <Badge color="green">v{current}</Badge> : <Text c="dimmed">not set</Text>}
          <Text fw={500} ml="lg">
            latest
          </Text>
          <Badge color="blue">v{prompt.labels.latest}</Badge>
          <Text size="xs" c="dimmed">
            (always the newest version)
          </Text>
        </Group>
        <Group align="flex-end">
          <Select
            label="Move production to"
            placeholder="Choose a version"
            data={options}
            value={target}
            onChange={setTarget}
            w={360}
          />
          <Button
            disabled={!target || Number(target) === current}
            loading={move.isPending}
            onClick={() =>
              target &&
              move.mutate(
                { version: Number(target), label: 'production' },
                { onSuccess: () => setTarget(null) },
              )
            }
          >
            Move production
          </Button>
        </Group>
        <ErrorAlert error={move.error} />
      </Stack>
    </Paper>
  );
}
