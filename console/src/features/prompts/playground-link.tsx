import { Button, Menu } from '@mantine/core';
import { Link } from 'react-router';
import { useAgents } from '../config/agents/queries.js';

/**
 * The playground address for one version of a prompt, with an agent:
 * /playground?agent=<id>&prompt=<name>&version=<n> (the playground reads these).
 */
export function playgroundHref(projectId: string, prompt: string, version: number, agentId?: string): string {
  const q = new URLSearchParams();
  q.set('project', projectId);
  if (agentId) q.set('agent', agentId);
  q.set('prompt', prompt);
  q.set('version', String(version));
  return `/playground?${q.toString()}`;
}

/** "Open in the playground": with each agent using this prompt (those first), or without an agent. */
export function PlaygroundLink({
  projectId,
  promptId,
  promptName,
  version,
}: {
  projectId: string;
  promptId: string;
  promptName: string;
  version: number;
}) {
  const agents = useAgents(projectId);
  const list = [...(agents.data ?? [])].sort(
    (a, b) => Number(b.prompt_id === promptId) - Number(a.prompt_id === promptId),
  );
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <Button size="compact-sm" variant="light" aria-label={`Open v${version} in the playground`}>
          Open in playground
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>With agent</Menu.Label>
        {list.map((a) => (
          <Menu.Item key={a.id} component={Link} to={playgroundHref(projectId, promptName, version, a.id)}>
            {a.name}
            {a.prompt_id === promptId ? ' (uses this prompt)' : ''}
          </Menu.Item>
        ))}
        {list.length === 0 && <Menu.Item disabled>No agent in this project</Menu.Item>}
        <Menu.Divider />
        <Menu.Item component={Link} to={playgroundHref(projectId, promptName, version)}>
          Choose the agent there
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
