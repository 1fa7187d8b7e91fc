import { Alert, Anchor, Button, Code, Stack, Text } from '@mantine/core';
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
 * for a link to another version, how to run that one: try it in this
 * conversation (converse `overrides`, nothing moves), or move the label.
 */
export function PromptNotice({
  agent,
  prompt,
  versions,
  linked,
  triedVersionId,
  onTry,
}: {
  agent: Agent;
  prompt: Prompt | undefined;
  versions: PromptVersion[];
  linked: LinkedVersion | undefined;
  /** The prompt version this conversation is trying, if any. */
  triedVersionId: string | undefined;
  /** Try a version in this conversation. */
  onTry: (versionId: string) => void;
}) {
  const label = agent.prompt_label ?? 'latest';
  const current = versions.find((v) => v.labels?.includes(label));
  const href = promptHref(prompt?.name);
  const otherPrompt = linked && prompt?.name && linked.promptName !== prompt.name;
  const lv = linked?.version;
  const tryIt = lv && lv.id !== triedVersionId && (
    <Button size="compact-xs" color="orange" variant="light" mt={6} onClick={() => onTry(lv.id)}>
      Try v{lv.version} in this conversation
    </Button>
  );
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
          This agent uses prompt {prompt.name}. Choose an agent that uses {linked.promptName}, or try
          {lv ? ` v${lv.version} of it` : ' it'} with this agent in this conversation.
          {tryIt && <div>{tryIt}</div>}
        </Alert>
      )}
      {!otherPrompt && lv && current && lv.id !== current.id && (
        <Alert color="orange" title={`You opened v${lv.version} of ${lv.name}`} role="status">
          This agent runs the version labelled <Code>{label}</Code> (v{current.version}). Try v{lv.version} in
          this conversation (nothing moves), or move the <Code>{label}</Code> label to v{lv.version} in{' '}
          <Anchor component={Link} to={href} inherit>
            Prompts
          </Anchor>{' '}
          and every next turn of the agent uses it.
          {tryIt && <div>{tryIt}</div>}
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
