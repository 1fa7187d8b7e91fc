import { Button, Group, NumberInput, Select, Switch, TextInput } from '@mantine/core';
import type { FormEvent } from 'react';
import { useFields } from '../../components/resource-form.js';
import type { TraceFilters } from '../../api/types.js';

export const FILTER_KEYS = [
  'service_name',
  'span_name',
  'min_duration_ms',
  'max_duration_ms',
  'has_errors',
  'project_id',
  'agent_id',
  'conversation_id',
  'include_console',
] as const;

/** In the address when "This project only" is off: the default is the project picked in the header. */
export const ALL_PROJECTS = 'all_projects';

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
  if (params.get('include_console') === 'true') f.include_console = true;
  return f;
}

/**
 * The filters as queried: "This project only" is on unless the address says
 * otherwise, so the list follows the project picked in the header.
 */
export function effectiveFilters(params: URLSearchParams, projectId: string | undefined): TraceFilters {
  const f = filtersFrom(params);
  if (!f.project_id && projectId && params.get(ALL_PROJECTS) !== 'true') f.project_id = projectId;
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
    include_console: value.include_console ? 'true' : '',
  });
  const f = useFields<Draft>(init, undefined);
  const d = f.values;
  const set = (k: keyof Draft) => (v: string) => f.set({ [k]: v });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(d);
  };
  const text = (k: keyof Draft, label: string, placeholder: string) => (
    <TextInput size="xs" label={label} placeholder={placeholder} w={160} {...f.text(k)} />
  );
  const ms = (k: 'min_duration_ms' | 'max_duration_ms', label: string) => (
    <NumberInput size="xs" label={label} min={0} w={90} value={d[k]} onChange={(v) => set(k)(String(v))} />
  );
  return (
    <form onSubmit={submit} aria-label="Trace filters">
      <Group align="flex-end" gap="xs">
        {text('service_name', 'Service', 'agent-server-api')}
        {text('span_name', 'Span name contains', 'converse')}
        {ms('min_duration_ms', 'Min ms')}
        {ms('max_duration_ms', 'Max ms')}
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
        {text('conversation_id', 'Conversation', 'conversation id')}
        <Switch
          label="This project only"
          checked={Boolean(d.project_id)}
          disabled={!projectId}
          onChange={(e) => set('project_id')(e.currentTarget.checked ? (projectId ?? '') : '')}
          size="xs"
          mb={6}
        />
        <Switch
          label="Console's own requests"
          title="The console's own calls to the API (agent turns started from it are listed either way)"
          checked={d.include_console === 'true'}
          onChange={(e) => set('include_console')(e.currentTarget.checked ? 'true' : '')}
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
