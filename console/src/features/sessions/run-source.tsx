import { Badge, Tooltip } from '@mantine/core';
import type { Run } from '../../api/types.js';

type Source = NonNullable<Run['source']>;

// What each door is, for the badge's tooltip.
const SAID: Record<Source, string> = {
  rest: 'Started through the REST converse API',
  langgraph: 'Started through the LangGraph-compatible API',
  mcp: "Called as a tool of the project's MCP server",
  a2a: 'Sent to the agent over A2A',
  cron: 'Started by a schedule',
  eval: 'Started by an evaluation',
  sub_agent: 'Handed a task by another agent',
};

/** The door a run came through, as a small badge (nothing for a run older than sources). */
export function RunSource({ source }: { source: Run['source'] }) {
  if (!source) return null;
  return (
    <Tooltip label={SAID[source]}>
      <Badge size="xs" variant="outline" color="gray" data-run-source={source}>
        {source.replace('_', '-')}
      </Badge>
    </Tooltip>
  );
}
