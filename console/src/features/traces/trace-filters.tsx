import { Button, Group, NumberInput, Select, Switch, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import type { TraceFilters } from './queries.js';

export const FILTER_KEYS = [
  'service_name',
  'span_name',
  'min_duration_ms',
  'max_duration_ms',
  'has_errors',
  'project_id',
  'agent_id',
  'conversation_id',
] as const;

/** The filters of GET /traces, read from the URL's search parameters. */
export function filtersFrom(params: URLSearchParams): TraceFilters {
  const f: TraceFilters = {};
  const text = (k: 'service_name' | 'span_name' | 'project_id' | 'agent_id' | 'conversation_id') => {
    const v = params.get(k);
    if (v) f[k] = v;
  };
  text('service_name');
  text('span_name');
  text('project_id');
  text('agent_id');
  text('conversation_id');
  for (const k of ['min_duration_ms', 'max_duration_ms'] as const) {
    const v = params.get(k);
    if (v !== null && v !== '' && !Number.isNaN(Number(v))) f[k] = Number(v);
  }
  const e = params.get('has_errors');
  if (e === 'true' || e === 'false') f.has_errors = e === 'true';
  return f;
}

type Draft = Record<(typeof FILTER_KEYS)[number], string>;

/** The filter form; applied on submit (Enter or the button), so typing does not query on every key. */
export function TraceFilterForm({
  value,
  projectId,
  agents,
  onApply,
}: {
  value: TraceFilters;
  projectId: string | undefined;
  agents: Array<{ value: string; label: string }>;
  onApply: (f: Record<string, string>) => void;
}) {
  const init = (): Draft => ({
    service_name: value.service_name ?? '',
    span_name: value.span_name ?? '',
    min_duration_ms: value.min_duration_ms?.toString() ?? '',
    max_duration_ms: value.max_duration_ms?.toString() ?? '',
    has_errors: value.has_errors === undefined ? '' : String(value.has_errors),
    project_id: value.project_id ?? '',
    agent_id: value.agent_id ?? '',
    conversation_id: value.conversation_id ?? '',
  });
  const [d, setD] = useState<Draft>(init);
  const set = (k: keyof Draft) => (v: string) => setD((p) => ({ ...p, [k]: v }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(d);
  };
  return (
    <form onSubmit={submit} aria-label="Trace filters">
      <Group align="flex-end" gap="xs">
        <TextInput
          size="xs"
          label="Service"
          placeholder="agent-server-api"
          value={d.service_name}
          onChange={(e) => set('service_name')(e.currentTarget.value)}
          w={160}
        />
        <TextInput
          size="xs"
          label="Span name contains"
          placeholder="converse"
          value={d.span_name}
          onChange={(e) => set('span_name')(e.currentTarget.value)}
          w={160}
        />
        <NumberInput
          size="xs"
          label="Min ms"
          min={0}
          value={d.min_duration_ms}
          onChange={(v) => set('min_duration_ms')(String(v))}
          w={90}
        />
        <NumberInput
          size="xs"
          label="Max ms"
          min={0}
          value={d.max_duration_ms}
          onChange={(v) => set('max_duration_ms')(String(v))}
          w={90}
        />
        <Select
          size="xs"
          label="Errors"
          data={[
            { value: 'any', label: 'Any' },
            { value: 'true', label: 'With errors' },
            { value: 'false', label: 'Without errors' },
          ]}
          value={d.has_errors || 'any'}
          onChange={(v) => set('has_errors')(v === 'any' || !v ? '' : v)}
          allowDeselect={false}
          w={130}
        />
        <Select
          size="xs"
          label="Agent"
          placeholder="Any agent"
          data={agents}
          value={d.agent_id || null}
          onChange={(v) => set('agent_id')(v ?? '')}
          clearable
          searchable
          w={160}
        />
        <TextInput
          size="xs"
          label="Conversation"
          placeholder="conversation id"
          value={d.conversation_id}
          onChange={(e) => set('conversation_id')(e.currentTarget.value)}
          w={160}
        />
        <Switch
          label="This project only"
          checked={Boolean(d.project_id)}
          disabled={!projectId}
          onChange={(e) => set('project_id')(e.currentTarget.checked ? (projectId ?? '') : '')}
          size="xs"
          mb={6}
        />
        <Button type="submit" size="xs">
          Apply
        </Button>
      </Group>
    </form>
  );
}
