import { Badge, Button, Group, Paper, Select, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import type { Prompt, PromptVersion } from '../../api/types.js';
import { MoveProductionDialog } from './move-production.js';
import { useCan } from '../../app/auth.js';

/**
 * Where the labels sit; `production` moves to any version (once confirmed),
 * `latest` always follows the newest.
 */
export function LabelsPanel({
  projectId,
  prompt,
  versions,
}: {
  projectId: string;
  prompt: Prompt;
  versions: PromptVersion[];
}) {
  const develops = useCan()('develop');
  const current = prompt.labels.production ?? null;
  const [target, setTarget] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
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
        {develops && (
          <Group align="flex-end">
            <Select
              label="Move production to"
              placeholder="Choose a version"
              data={options}
              value={target}
              onChange={setTarget}
              w={360}
            />
            <Button disabled={!target || Number(target) === current} onClick={() => setAsking(true)}>
              Move production
            </Button>
          </Group>
        )}
      </Stack>
      {asking && target && (
        <MoveProductionDialog
          projectId={projectId}
          prompt={prompt}
          version={Number(target)}
          onClose={() => setAsking(false)}
          onMoved={() => setTarget(null)}
        />
      )}
    </Paper>
  );
}
