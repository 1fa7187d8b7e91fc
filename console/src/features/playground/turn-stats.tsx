import { Anchor, Badge, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { Model, PromptVersion, Run } from '../../api/types.js';
import { formatUsd } from '../../lib/money.js';
import { formatMs } from './format.js';
import type { TurnView } from './transcript.js';
import { describeChanges } from './try-changes.js';

/** The run's `overrides` in the panel's words ("prompt v2 · model fast · temperature 0.7"), or undefined. */
function triedWith(run: Run, versions: PromptVersion[], models: Model[]): string | undefined {
  const o = run.overrides;
  if (!o) return undefined;
  return describeChanges(
    {
      ...(o.prompt_version_id ? { promptVersionId: o.prompt_version_id } : {}),
      ...(o.model_id ? { modelId: o.model_id } : {}),
      ...(o.parameters ? { parameters: o.parameters } : {}),
    },
    versions,
    models,
  );
}

/**
 * Tokens, cost and latency of one turn (with the time to its first output
 * and the time it waited for approval, as the server measured them), the
 * prompt version it ran, what it was tried with, and links to its trace and
 * workflow.
 */
export function TurnStats({
  run,
  view,
  versions,
  models,
}: {
  run: Run | undefined;
  view: TurnView;
  versions: PromptVersion[];
  models: Model[];
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
    if (run.first_token_ms != null) items.push(['first token', formatMs(run.first_token_ms)]);
    // While it waits, since when (a figure fetched once would stand still); after, for how long.
    if (run.pause?.since)
      items.push(['waiting for approval since', new Date(run.pause.since).toLocaleTimeString()]);
    else if (run.approval_wait_ms != null)
      items.push(['waiting for approval', formatMs(run.approval_wait_ms)]);
    items.push(['latency', formatMs(run.duration_ms)]);
    if (run.model) items.push(['model', run.model]);
    if (run.prompt_version_id)
      items.push([
        'prompt',
        version ? `${version.name} v${version.version}` : run.prompt_version_id.slice(0, 8),
      ]);
  }
  const tried = run && triedWith(run, versions, models);
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
      {tried && (
        <Badge
          size="sm"
          color="orange"
          variant="light"
          tt="none"
          title="This turn ran with changes tried in the playground"
        >
          tried: {tried}
        </Badge>
      )}
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
