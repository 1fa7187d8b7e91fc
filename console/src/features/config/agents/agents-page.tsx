import { Badge, Button, Text, Tooltip } from '@mantine/core';
import { Link } from 'react-router';
import type { Agent } from '../../../api/types.js';
import { usePrompts } from '../../prompts/queries.js';
import { useModels } from '../models/queries.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { AgentForm } from './agent-form.js';
import { useAgents, useDeleteAgent } from './queries.js';

function AgentName({ agent }: { agent: Agent }) {
  return (
    <>
      {agent.name}{' '}
      {!!agent.warnings?.length && (
        <Tooltip label={agent.warnings.join(' ')} multiline w={320}>
          <Badge color="yellow" variant="light" tabIndex={0}>
            warning
          </Badge>
        </Tooltip>
      )}
    </>
  );
}

function Agents({ projectId }: { projectId: string }) {
  const models = useModels(projectId);
  const prompts = usePrompts(projectId);
  const modelName = (id: string) => models.data?.find((m) => m.id === id)?.name ?? id;
  const promptName = (id: string) => prompts.data?.find((p) => p.id === id)?.name ?? id;
  return (
    <ResourcePage<Agent>
      need="develop"
      title="Agents"
      what="agent"
      intro="What a session runs: a model, a prompt, tools (MCP servers, the sandbox), skills, a summarizer and limits."
      query={useAgents(projectId)}
      empty={{
        title: 'No agent in this project',
        body: 'Create an agent from a model and a prompt, then talk to it in the playground.',
      }}
      name={(a) => <AgentName agent={a} />}
      columns={[
        { header: 'Model', cell: (a) => modelName(a.model_id) },
        {
          header: 'Prompt',
          cell: (a) => (
            <>
              {promptName(a.prompt_id)} <Badge variant="outline">{a.prompt_label}</Badge>
            </>
          ),
        },
        { header: 'Summarizer', cell: (a) => a.summarizer_type },
        {
          header: 'Tools',
          cell: (a) => (
            <Text size="sm">
              {a.mcp_servers.length} MCP
              {a.a2a_agents.length ? ` · ${a.a2a_agents.length} A2A` : ''}
              {a.sandbox.enabled ? ' · sandbox' : ''}
            </Text>
          ),
        },
      ]}
      remove={useDeleteAgent(projectId)}
      rowExtras={(a) => (
        <Button
          size="compact-sm"
          variant="light"
          component={Link}
          to={`/playground?project=${projectId}&agent=${a.id}`}
          aria-label={`Open ${a.name} in the playground`}
        >
          Playground
        </Button>
      )}
      modalSize="xl"
      form={(item, close) => <AgentForm projectId={projectId} item={item} onDone={close} />}
    />
  );
}

export function AgentsPage() {
  return <NeedProject>{(p) => <Agents key={p.id} projectId={p.id} />}</NeedProject>;
}
