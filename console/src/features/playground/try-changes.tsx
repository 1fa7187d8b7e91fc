import {
  Alert,
  Button,
  Group,
  JsonInput,
  NumberInput,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Text,
} from '@mantine/core';
import { useState } from 'react';
import type { Agent, Model, PromptVersion } from '../../api/types.js';
import { isTrying, type TryChanges } from './params.js';

/** The parameters with an input of their own; any other goes in "Other parameters" (JSON). */
const NUMBERS = [
  { key: 'temperature', min: 0, max: 2, step: 0.1, decimals: true },
  { key: 'top_p', min: 0, max: 1, step: 0.05, decimals: true },
  { key: 'max_tokens', min: 1, max: 10_000_000, step: 1, decimals: false },
] as const;
const NUMBER_KEYS: ReadonlySet<string> = new Set(NUMBERS.map((n) => n.key));

const versionLabel = (v: PromptVersion) =>
  `${v.name} v${v.version}${v.labels?.length ? ` (${v.labels.join(', ')})` : ''}${v.commit_message ? ` — ${v.commit_message}` : ''}`;

/** What is being tried, in a few words: "prompt v2 · model fast · temperature 0.7". */
export function describeChanges(t: TryChanges, versions: PromptVersion[], models: Model[]): string {
  const parts: string[] = [];
  if (t.promptVersionId) {
    const v = versions.find((x) => x.id === t.promptVersionId);
    parts.push(`prompt ${v ? `${v.name} v${v.version}` : t.promptVersionId.slice(0, 8)}`);
  }
  if (t.modelId) parts.push(`model ${models.find((m) => m.id === t.modelId)?.name ?? t.modelId.slice(0, 8)}`);
  for (const [k, v] of Object.entries(t.parameters ?? {})) parts.push(`${k} ${JSON.stringify(v)}`);
  return parts.join(' · ');
}

function withParameter(t: TryChanges, key: string, value: unknown): TryChanges {
  const parameters = { ...t.parameters };
  if (value === undefined) delete parameters[key];
  else parameters[key] = value;
  return { ...t, parameters: Object.keys(parameters).length ? parameters : undefined };
}

/** The parameters without an input of their own, as JSON text ('' when none). */
function otherParameters(t: TryChanges): string {
  const rest = Object.fromEntries(Object.entries(t.parameters ?? {}).filter(([k]) => !NUMBER_KEYS.has(k)));
  return Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '';
}

/**
 * "Try changes": the next turns of this conversation run with another
 * prompt version, model or parameters (converse `overrides`), without
 * changing the agent or moving a prompt label. Kept in the address with
 * the conversation; shown while active, with a reset.
 */
export function TryChangesPanel({
  agent,
  versions,
  models,
  value,
  onChange,
}: {
  agent: Agent;
  versions: PromptVersion[];
  models: Model[];
  value: TryChanges;
  /** Given how to change the current ones (quick edits in a row each build on the one before). */
  onChange: (change: (current: TryChanges) => TryChanges) => void;
}) {
  const active = isTrying(value);
  const [open, setOpen] = useState(false);
  const [otherText, setOtherText] = useState(() => otherParameters(value));
  const [otherError, setOtherError] = useState<string | undefined>(undefined);
  const label = agent.prompt_label ?? 'latest';
  const current = versions.find((v) => v.labels?.includes(label));
  const agentModel = models.find((m) => m.id === agent.model_id);

  const setOther = (text: string) => {
    setOtherText(text);
    let parsed: unknown;
    try {
      parsed = text.trim() ? JSON.parse(text) : {};
    } catch {
      setOtherError('Not valid JSON yet');
      return;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      setOtherError('An object of parameters, e.g. {"seed": 7}');
      return;
    }
    setOtherError(undefined);
    const other = parsed as Record<string, unknown>;
    onChange((t) => {
      const kept = Object.fromEntries(Object.entries(t.parameters ?? {}).filter(([k]) => NUMBER_KEYS.has(k)));
      const parameters = { ...kept, ...other };
      return { ...t, parameters: Object.keys(parameters).length ? parameters : undefined };
    });
  };
  const reset = () => {
    setOtherText('');
    setOtherError(undefined);
    onChange(() => ({}));
  };

  return (
    <Stack gap="xs">
      {active && (
        <Alert color="orange" variant="light" p="xs" role="status" aria-label="Trying changes">
          <Group justify="space-between" wrap="nowrap">
            <Text size="sm">
              <b>Trying changes in this conversation:</b> {describeChanges(value, versions, models)}. The
              agent and its prompt labels are unchanged.
            </Text>
            <Group gap="xs" wrap="nowrap">
              {!open && (
                <Button size="compact-xs" variant="default" onClick={() => setOpen(true)}>
                  Edit
                </Button>
              )}
              <Button size="compact-xs" color="orange" onClick={reset}>
                Reset
              </Button>
            </Group>
          </Group>
        </Alert>
      )}
      {!active && !open && (
        <Button size="xs" variant="subtle" w="fit-content" onClick={() => setOpen(true)}>
          Try changes…
        </Button>
      )}
      {open && (
        <Paper withBorder p="sm" radius="md" component="section" aria-label="Try changes">
          <Stack gap="xs">
            <Group justify="space-between">
              <Text size="sm" fw={600}>
                Try changes
              </Text>
              <Button size="compact-xs" variant="subtle" onClick={() => setOpen(false)}>
                Close
              </Button>
            </Group>
            <Text size="xs" c="dimmed">
              The next turns of this conversation run with these instead of the agent&apos;s own; nothing is
              saved on the agent, and no prompt label moves.
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
              <Select
                size="xs"
                label="Prompt version"
                placeholder={`As the agent: ${current ? `v${current.version}` : label}`}
                data={versions.map((v) => ({ value: v.id, label: versionLabel(v) }))}
                value={value.promptVersionId ?? null}
                onChange={(v) => onChange((t) => ({ ...t, promptVersionId: v ?? undefined }))}
                clearable
              />
              <Select
                size="xs"
                label="Model"
                placeholder={`As the agent: ${agentModel?.name ?? '…'}`}
                data={models.map((m) => ({ value: m.id, label: `${m.name} (${m.model_id})` }))}
                value={value.modelId ?? null}
                onChange={(v) => onChange((t) => ({ ...t, modelId: v ?? undefined }))}
                clearable
                searchable
              />
            </SimpleGrid>
            <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="xs">
              {NUMBERS.map((n) => {
                const own = (value.modelId ? models.find((m) => m.id === value.modelId) : agentModel)
                  ?.parameters?.[n.key];
                const v = value.parameters?.[n.key];
                return (
                  <NumberInput
                    key={n.key}
                    size="xs"
                    label={n.key}
                    placeholder={
                      own === undefined ? "the vendor's default" : `the model's: ${JSON.stringify(own)}`
                    }
                    min={n.min}
                    max={n.max}
                    step={n.step}
                    allowDecimal={n.decimals}
                    value={typeof v === 'number' ? v : ''}
                    onChange={(x) =>
                      onChange((t) => withParameter(t, n.key, typeof x === 'number' ? x : undefined))
                    }
                  />
                );
              })}
            </SimpleGrid>
            <JsonInput
              size="xs"
              label="Other parameters"
              description="Any other model parameter (presence_penalty, stop, seed, …), as JSON"
              placeholder='{"seed": 7}'
              autosize
              minRows={1}
              value={otherText}
              error={otherError}
              onChange={setOther}
            />
          </Stack>
        </Paper>
      )}
    </Stack>
  );
}
