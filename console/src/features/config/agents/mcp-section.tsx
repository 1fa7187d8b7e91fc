import { useState } from 'react';
import { useInspect, useMcpServers } from '../mcp/queries.js';
import type { McpDraft } from './draft.js';
import type { SectionProps } from './sections.js';
import { ToolSourceRow, ToolSources, type RowProps, type ToolSourceEntry } from './tool-sources.js';

const MCP = {
  noun: 'MCP server',
  field: 'mcp_servers',
  idField: 'mcp_server_id',
  offers: 'Tool',
  loadLabel: 'Load its tools',
  none: 'No MCP server: the agent has no MCP tools.',
  register: 'Add MCP servers in the MCP servers tab first.',
};

const entryOf = (m: McpDraft): ToolSourceEntry => ({
  id: m.mcp_server_id,
  tool_filters: m.tool_filters,
  tools_requiring_approval: m.tools_requiring_approval,
});
const draftOf = (e: ToolSourceEntry): McpDraft => ({
  mcp_server_id: e.id,
  tool_filters: e.tool_filters,
  tools_requiring_approval: e.tools_requiring_approval,
});

/** A server of the agent, its tools listed (connecting to it) only when asked. */
function McpRow(props: RowProps) {
  const [load, setLoad] = useState(false);
  const tools = useInspect(props.entry.id ?? undefined, load);
  return (
    <ToolSourceRow
      {...props}
      kind={MCP}
      offered={{
        names: (tools.data?.tools ?? []).map((t) => t.name),
        loading: tools.isFetching,
        error: tools.error,
        load: () => setLoad(true),
      }}
      onChange={(e) => {
        if (e.id !== props.entry.id) setLoad(false);
        props.onChange(e);
      }}
    />
  );
}

/** The MCP servers the agent may use, each with its tool filter and the tools that need approval. */
export function McpSection({ projectId, f, err }: SectionProps) {
  const servers = useMcpServers(projectId);
  return (
    <ToolSources
      kind={MCP}
      entries={f.values.mcp_servers.map(entryOf)}
      setEntries={(list) => f.set({ mcp_servers: list.map(draftOf) })}
      options={servers.data}
      err={err}
      row={(props) => <McpRow {...props} />}
    />
  );
}
