import { Anchor, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { PromptVersion, Run } from '../../api/types.js';
import { formatUsd } from '../../lib/money.js';
import { formatMs } from './format.js';
import type { TurnView } from './transcript.js';

/** Tokens, cost and latency of one turn, the prompt version it ran, and links to its trace and workflow. */
export function TurnStats({
  run,
  view,
  versions,
}: {
  run: Run | undefined;
  view: TurnView;
  versions: PromptVersion[];
}) {
  const usage = run?.usage ?? view.usage;
  const version = versions.find((v) => v.id === run?.prompt_version_id);
  const items: Array<[string, string]> = [];
  if (usage) {
    items.push(['tokens in', String(usage.input_tokens ?? 0)]);
    items.push(['tokens out', String(usage.output_tokens ?? 0)]);
  }
  if (run) {
    items.push(['cost', formatUsd(run.cost_usd, 'no price')]);
    items.push(['latency', formatMs(run.duration_ms)]);
    if (run.model) items.push(['model', run.model]);
    if (run.prompt_version_id)
      items.push([
        'prompt',
        version ? `${version.name} v${version.version}` : run.prompt_version_id.slice(0, 8),
      ]);
  }
  return (
    <Group gap="md" aria-label="Turn statistics" role="group">
      {items.map(([k, v]) => (
        <Text key={k} size="xs" c="dimmed">
          {k}{' '}
          <Text span size="xs" fw={600} c="var(--mantine-color-text)">
            {v}
          </Text>
        </Text>
      ))}
      {run?.trace_id && (
        <Anchor component={Link} to={`/traces/${run.trace_id}`} size="xs">
          trace
        </Anchor>
      )}
      {run?.temporal_ui_url && (
        <Anchor href={run.temporal_ui_url} target="_blank" rel="noreferrer" size="xs">
          workflow
        </Anchor>
      )}
    </Group>
  );
}
