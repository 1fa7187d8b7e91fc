import { useState } from 'react';
import { useA2aAgents, useInspectA2a } from '../a2a/queries.js';
import type { A2aDraft } from './draft.js';
import type { SectionProps } from './sections.js';
import { ToolSourceRow, ToolSources, type RowProps, type ToolSourceEntry } from './tool-sources.js';

const A2A = {
  noun: 'A2A agent',
  field: 'a2a_agents',
  idField: 'a2a_agent_id',
  offers: 'Skill',
  loadLabel: 'Load its skills',
  none: 'No A2A agent: the agent calls no remote agent.',
  register: 'Add remote agents in the A2A agents tab first.',
};

const entryOf = (a: A2aDraft): ToolSourceEntry => ({
  id: a.a2a_agent_id,
  tool_filters: a.tool_filters,
  tools_requiring_approval: a.tools_requiring_approval,
});
const draftOf = (e: ToolSourceEntry): A2aDraft => ({
  a2a_agent_id: e.id,
  tool_filters: e.tool_filters,
  tools_requiring_approval: e.tools_requiring_approval,
});

/** A remote agent of the agent, its skills read from its card only when asked (it reaches out). */
function A2aRow(props: RowProps) {
  const [load, setLoad] = useState(false);
  const card = useInspectA2a(props.entry.id ?? undefined, load);
  return (
    <ToolSourceRow
      {...props}
      kind={A2A}
      offered={{
        names: (card.data?.skills ?? []).flatMap((s) => (s.id ? [s.id] : [])),
        loading: card.isFetching,
        error: card.error,
        load: () => setLoad(true),
      }}
      onChange={(e) => {
        if (e.id !== props.entry.id) setLoad(false);
        props.onChange(e);
      }}
    />
  );
}

/**
 * The project's remote A2A agents the agent may call, each with its skill
 * filter (skill ids; empty: every skill on the card) and the skills whose
 * calls need approval.
 */
export function A2aSection({ projectId, f, err }: SectionProps) {
  const agents = useA2aAgents(projectId);
  return (
    <ToolSources
      kind={A2A}
      entries={f.values.a2a_agents.map(entryOf)}
      setEntries={(list) => f.set({ a2a_agents: list.map(draftOf) })}
      options={agents.data}
      err={err}
      row={(props) => <A2aRow {...props} />}
    />
  );
}
