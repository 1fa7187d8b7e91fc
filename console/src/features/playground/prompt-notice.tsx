import { Alert, Anchor, Code, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Agent, Prompt, PromptVersion } from '../../api/types.js';

/** The version a link asked for ("open this version in the playground"). */
export interface LinkedVersion {
  promptName: string;
  version: PromptVersion | undefined;
}

const promptHref = (name: string | undefined) => (name ? `/prompts/${encodeURIComponent(name)}` : '/prompts');

/**
 * Which prompt version the agent runs (the version its label points at) and,
 * for a link to another version, how to make the agent run that one:
 * converse takes no version, the agent's label decides.
 */
export function PromptNotice({
  agent,
  prompt,
  versions,
  linked,
}: {
  agent: Agent;
  prompt: Prompt | undefined;
  versions: PromptVersion[];
  linked: LinkedVersion | undefined;
}) {
  const label = agent.prompt_label ?? 'latest';
  const current = versions.find((v) => v.labels?.includes(label));
  const href = promptHref(prompt?.name);
  const otherPrompt = linked && prompt?.name && linked.promptName !== prompt.name;
  const lv = linked?.version;
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        prompt{' '}
        <Anchor component={Link} to={href} size="xs">
          {prompt?.name ?? '…'}
        </Anchor>{' '}
        label <Code>{label}</Code> → {current ? `v${current.version}` : 'no version'}
      </Text>
      {otherPrompt && (
        <Alert color="orange" title={`You opened prompt ${linked.promptName}`} role="status">
          This agent uses prompt {prompt.name}. Choose an agent that uses {linked.promptName} to try it.
        </Alert>
      )}
      {!otherPrompt && lv && current && lv.id !== current.id && (
        <Alert color="orange" title={`You opened v${lv.version} of ${lv.name}`} role="status">
          This agent runs the version labelled <Code>{label}</Code> (v{current.version}); a conversation
          cannot pick another. Move the <Code>{label}</Code> label to v{lv.version} in{' '}
          <Anchor component={Link} to={href} inherit>
            Prompts
          </Anchor>{' '}
          and the next turn here uses it.
        </Alert>
      )}
      {!otherPrompt && lv && current && lv.id === current.id && (
        <Text size="xs" c="green" role="status">
          The agent runs v{lv.version}, the version you opened.
        </Text>
      )}
      {linked && !lv && !otherPrompt && versions.length > 0 && (
        <Text size="xs" c="orange" role="status">
          The linked prompt version was not found.
        </Text>
      )}
    </Stack>
  );
}
