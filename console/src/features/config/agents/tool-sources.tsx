import { Button, Group, Paper, Select, Stack, TagsInput, Text } from '@mantine/core';
import { Fragment, type ReactNode } from 'react';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';

/** One entry of a list of tool sources on an agent (an MCP server, a remote A2A agent) as the form holds it. */
export interface ToolSourceEntry {
  /** The source chosen; null until one is. */
  id: string | null;
  tool_filters: string[];
  tools_requiring_approval: string[];
}

/** What tells one kind of tool source from another in the form: its words and where the API names its errors. */
export interface ToolSourceKind {
  /** "MCP server": the picker is "MCP server 1", its remove button "Remove MCP server 1". */
  noun: string;
  /** The list's field in the agent (`mcp_servers`): errors come back as `<field>.<index>.<idField>`. */
  field: string;
  idField: string;
  /** What the source offers, as the filters' labels say it ("Tool", "Skill"). */
  offers: string;
  /** The load button's text. */
  loadLabel: string;
  /** Shown while the list is empty; `register` too when the project has none to choose. */
  none: string;
  register: string;
}

/** The names its source offers, loaded on demand because listing them reaches out to it. */
export interface OfferedNames {
  names: string[];
  loading: boolean;
  error: Error | null;
  load: () => void;
}

/** What the list hands each of its rows. */
export interface RowProps {
  index: number;
  entry: ToolSourceEntry;
  options: Source[];
  /** Sources other entries already list. */
  taken: string[];
  onChange: (e: ToolSourceEntry) => void;
  onRemove: () => void;
  err: unknown;
}

type Source = { id: string; name: string };

/**
 * One tool source of the agent: which one (a source listed in another entry
 * cannot be chosen twice), the names it offers loaded on demand as the
 * filters' suggestions, its filter and the names that need approval.
 */
export function ToolSourceRow({
  kind,
  index,
  entry,
  options,
  taken,
  offered,
  onChange,
  onRemove,
  err,
}: RowProps & { kind: ToolSourceKind; offered: OfferedNames }) {
  const at = `${kind.field}.${index}`;
  const n = index + 1;
  const plural = `${kind.offers.toLowerCase()}s`;
  return (
    <Paper withBorder p="sm">
      <Stack gap="xs">
        <Group align="flex-end">
          <Select
            label={`${kind.noun} ${n}`}
            style={{ flex: 1 }}
            data={options.map((s) => ({
              value: s.id,
              label: s.name,
              disabled: taken.includes(s.id) && s.id !== entry.id,
            }))}
            value={entry.id}
            onChange={(v) => onChange({ ...entry, id: v })}
            error={fieldError(err, `${at}.${kind.idField}`) ?? fieldError(err, at)}
          />
          <Button variant="light" disabled={!entry.id} loading={offered.loading} onClick={offered.load}>
            {kind.loadLabel}
          </Button>
          <Button variant="subtle" color="red" onClick={onRemove} aria-label={`Remove ${kind.noun} ${n}`}>
            Remove
          </Button>
        </Group>
        {offered.error && (
          <Text size="xs" c="red">
            Could not list {plural}: {offered.error.message}
          </Text>
        )}
        <TagsInput
          label={`${kind.offers} filter`}
          description={`${kind.offers}s offered to the model; empty = all of them`}
          data={offered.names}
          value={entry.tool_filters}
          onChange={(v) => onChange({ ...entry, tool_filters: v })}
          error={fieldErrorUnder(err, `${at}.tool_filters`)}
          clearable
        />
        <TagsInput
          label={`${kind.offers}s requiring approval`}
          description="Calls to these pause the turn until someone approves"
          data={offered.names}
          value={entry.tools_requiring_approval}
          onChange={(v) => onChange({ ...entry, tools_requiring_approval: v })}
          error={fieldErrorUnder(err, `${at}.tools_requiring_approval`)}
          clearable
        />
      </Stack>
    </Paper>
  );
}

/**
 * The agent's list of one kind of tool source: a row each (`row` renders it,
 * with the loading of its offered names), the API's message for the whole
 * list, and Add while the project has a source not yet listed.
 */
export function ToolSources({
  kind,
  entries,
  setEntries,
  options,
  err,
  row,
}: {
  kind: ToolSourceKind;
  entries: ToolSourceEntry[];
  setEntries: (entries: ToolSourceEntry[]) => void;
  /** The project's sources; undefined while they load. */
  options: Source[] | undefined;
  err: unknown;
  row: (props: RowProps) => ReactNode;
}) {
  const taken = entries.map((e) => e.id).filter((x): x is string => !!x);
  const listError = fieldError(err, kind.field);
  return (
    <Stack>
      {entries.length === 0 && (
        <Text size="sm" c="dimmed">
          {kind.none} {options?.length === 0 && kind.register}
        </Text>
      )}
      {entries.map((entry, i) => (
        <Fragment key={i}>
          {row({
            index: i,
            entry,
            options: options ?? [],
            taken,
            onChange: (e) => setEntries(entries.map((x, j) => (j === i ? e : x))),
            onRemove: () => setEntries(entries.filter((_, j) => j !== i)),
            err,
          })}
        </Fragment>
      ))}
      {listError && (
        <Text size="xs" c="red">
          {listError}
        </Text>
      )}
      <Button
        variant="light"
        w="fit-content"
        disabled={!options?.length || taken.length >= options.length}
        onClick={() => setEntries([...entries, { id: null, tool_filters: [], tools_requiring_approval: [] }])}
      >
        Add {kind.noun}
      </Button>
    </Stack>
  );
}
