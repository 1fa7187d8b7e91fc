import { Anchor, Badge, Button, Code, Group, Select, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Agent, Prompt, PromptVersion } from '../../api/types.js';
import { PromptNotice, type LinkedVersion } from './prompt-notice.js';

export function PlaygroundHeader({
  agents,
  agent,
  conversationId,
  prompt,
  versions,
  schemaName,
  linked,
  linkedPromptId,
  triedVersionId,
  onTry,
  onAgent,
  onNew,
}: {
  agents: Agent[];
  agent: Agent | undefined;
  conversationId: string | undefined;
  prompt: Prompt | undefined;
  versions: PromptVersion[];
  schemaName: string | undefined;
  linked: LinkedVersion | undefined;
  /** Agents using the linked prompt come first, and say so. */
  linkedPromptId: string | undefined;
  triedVersionId: string | undefined;
  onTry: (versionId: string) => void;
  onAgent: (id: string) => void;
  onNew: () => void;
}) {
  const uses = (a: Agent) => Boolean(linkedPromptId) && a.prompt_id === linkedPromptId;
  const options = [...agents]
    .sort((a, b) => Number(uses(b)) - Number(uses(a)))
    .map((a) => ({
      value: a.id ?? '',
      label: `${a.name ?? a.id ?? ''}${uses(a) ? ` (uses ${linked?.promptName})` : ''}`,
    }));
  if (agent?.id && !options.some((o) => o.value === agent.id))
    options.push({ value: agent.id, label: agent.name ?? agent.id });
  return (
    <Stack gap="xs">
      <Group align="flex-end" justify="space-between">
        <Group align="flex-end">
          <Select
            label="Agent"
            placeholder="Choose an agent"
            data={options}
            value={agent?.id ?? null}
            onChange={(v) => v && onAgent(v)}
            searchable
            allowDeselect={false}
            w={280}
          />
          <Button variant="default" onClick={onNew} disabled={!conversationId}>
            New conversation
          </Button>
        </Group>
        {conversationId && (
          <Text size="xs" c="dimmed">
            conversation <Code>{conversationId}</Code>{' '}
            <Anchor component={Link} to={`/sessions/${encodeURIComponent(conversationId)}`} size="xs">
              in Sessions
            </Anchor>
          </Text>
        )}
      </Group>
      {agent && (
        <Group gap="md" align="flex-start">
          <PromptNotice
            agent={agent}
            prompt={prompt}
            versions={versions}
            linked={linked}
            triedVersionId={triedVersionId}
            onTry={onTry}
          />
          {schemaName && (
            <Badge variant="light" color="grape" tt="none">
              structured output: {schemaName}
            </Badge>
          )}
        </Group>
      )}
    </Stack>
  );
}
