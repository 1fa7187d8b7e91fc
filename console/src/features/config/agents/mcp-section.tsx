import { Button, Group, Paper, Select, Stack, TagsInput, Text } from '@mantine/core';
import { useState } from 'react';
import { useInspect, useMcpServers } from '../mcp/queries.js';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';
import type { McpDraft } from './draft.js';
import type { SectionProps } from './sections.js';

function McpRow({
  projectId,
  index,
  entry,
  taken,
  onChange,
  onRemove,
  err,
}: {
  projectId: string;
  index: number;
  entry: McpDraft;
  taken: string[];
  onChange: (e: McpDraft) => void;
  onRemove: () => void;
  err: unknown;
}) {
  const servers = useMcpServers(projectId);
  const [load, setLoad] = useState(false);
  const tools = useInspect(entry.mcp_server_id ?? undefined, load);
  const names = (tools.data?.tools ?? []).map((t) => t.name);
  const at = `mcp_servers.${index}`;
  const n = index + 1;
  return (
    <Paper withBorder p="sm">
      <Stack gap="xs">
        <Group align="flex-end">
          <Select
            label={`MCP server ${n}`}
            style={{ flex: 1 }}
            data={(servers.data ?? []).map((s) => ({
              value: s.id,
              label: s.name,
              disabled: taken.includes(s.id) && s.id !== entry.mcp_server_id,
            }))}
            value={entry.mcp_server_id}
            onChange={(v) => {
              setLoad(false);
              onChange({ ...entry, mcp_server_id: v });
            }}
            error={fieldError(err, `${at}.mcp_server_id`) ?? fieldError(err, at)}
          />
          <Button
            variant="light"
            disabled={!entry.mcp_server_id}
            loading={tools.isFetching}
            onClick={() => setLoad(true)}
          >
            Load its tools
          </Button>
          <Button variant="subtle" color="red" onClick={onRemove} aria-label={`Remove MCP server ${n}`}>
            Remove
          </Button>
        </Group>
        {tools.error && (
          <Text size="xs" c="red">
            Could not list tools: {tools.error.message}
          </Text>
        )}
        <TagsInput
          label="Tool filter"
          description="Tools offered to the model; empty = all of them"
          data={names}
          value={entry.tool_filters}
          onChange={(v) => onChange({ ...entry, tool_filters: v })}
          error={fieldErrorUnder(err, `${at}.tool_filters`)}
          clearable
        />
        <TagsInput
          label="Tools requiring approval"
          description="Calls to these pause the turn until someone approves"
          data={names}
          value={entry.tools_requiring_approval}
          onChange={(v) => onChange({ ...entry, tools_requiring_approval: v })}
          error={fieldErrorUnder(err, `${at}.tools_requiring_approval`)}
          clearable
        />
      </Stack>
    </Paper>
  );
}

/** The MCP servers the agent may use, each with its tool filter and the tools that need approval. */
export function McpSection({ projectId, f, err }: SectionProps) {
  const servers = useMcpServers(projectId);
  const list = f.values.mcp_servers;
  const set = f.set;
  const taken = list.map((m) => m.mcp_server_id).filter((x): x is string => !!x);
  const update = (i: number, e: McpDraft) => set({ mcp_servers: list.map((m, j) => (j === i ? e : m)) });
  return (
    <Stack>
      {list.length === 0 && (
        <Text size="sm" c="dimmed">
          No MCP server: the agent has no MCP tools.{' '}
          {servers.data?.length === 0 && 'Add MCP servers in the MCP servers tab first.'}
        </Text>
      )}
      {list.map((entry, i) => (
        <McpRow
          key={i}
          projectId={projectId}
          index={i}
          entry={entry}
          taken={taken}
          onChange={(e) => update(i, e)}
          onRemove={() => set({ mcp_servers: list.filter((_, j) => j !== i) })}
          err={err}
        />
      ))}
      {fieldError(err, 'mcp_servers') && (
        <Text size="xs" c="red">
          {fieldError(err, 'mcp_servers')}
        </Text>
      )}
      <Button
        variant="light"
        w="fit-content"
        disabled={!servers.data?.length || taken.length >= (servers.data?.length ?? 0)}
        onClick={() =>
          set({
            mcp_servers: [...list, { mcp_server_id: null, tool_filters: [], tools_requiring_approval: [] }],
          })
        }
      >
        Add MCP server
      </Button>
    </Stack>
  );
}
