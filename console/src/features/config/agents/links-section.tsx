import { Checkbox, Code, Group, MultiSelect, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';
import type { SubAgentDraft } from './draft.js';
import { useAgents } from './queries.js';
import type { SectionProps } from './sections.js';

/** A URL a client is given, on its own line so it can be copied whole. */
function ClientUrl({ label, url }: { label: string; url: string }) {
  return (
    <Text size="sm" c="dimmed" ml="xl">
      {label} <Code>{url}</Code>
    </Text>
  );
}

/**
 * The doors other clients may call this agent through, each with the URL
 * they use: the project's MCP server, and this agent's A2A card (known once
 * the agent is saved, since it carries the agent's id).
 */
export function AccessSection({ projectId, agentId, f, err }: SectionProps & { agentId?: string }) {
  const { expose } = f.values;
  const set = (patch: Partial<typeof expose>) => f.set({ expose: { ...expose, ...patch } });
  return (
    <Stack gap="xs">
      <Checkbox
        label="MCP"
        description="Served as a tool of the project's MCP server"
        checked={expose.mcp}
        onChange={(e) => set({ mcp: e.currentTarget.checked })}
        error={fieldError(err, 'expose.mcp')}
      />
      {expose.mcp && (
        <>
          <ClientUrl label="MCP server URL:" url={`${location.origin}/api/mcp/${projectId}`} />
          <Textarea
            ml="xl"
            label="Message when called without one"
            description="What a call through MCP that gives no message sends, for an agent whose work needs no words; empty: a call must give one"
            autosize
            minRows={1}
            maxRows={6}
            value={expose.mcp_message}
            onChange={(e) => set({ mcp_message: e.currentTarget.value })}
            error={fieldError(err, 'expose.mcp_message')}
          />
        </>
      )}
      <Checkbox
        label="A2A"
        description="Served as an A2A agent, with an agent card"
        checked={expose.a2a}
        onChange={(e) => set({ a2a: e.currentTarget.checked })}
        error={fieldError(err, 'expose.a2a') ?? fieldError(err, 'expose')}
      />
      {expose.a2a &&
        (agentId ? (
          <ClientUrl
            label="Agent card URL:"
            url={`${location.origin}/api/a2a/${agentId}/.well-known/agent-card.json`}
          />
        ) : (
          <Text size="sm" c="dimmed" ml="xl">
            The agent card URL shows once the agent is saved.
          </Text>
        ))}
    </Stack>
  );
}

/**
 * Other agents of the project the model may hand a task to, each with what
 * the model is told it does (empty: that agent's own description) and
 * whether each call of it waits for a person's approval. A cycle
 * or a missing agent comes back as the API's message under the picker.
 */
export function SubAgentsSection({ projectId, agentId, f, err }: SectionProps & { agentId?: string }) {
  const agents = useAgents(projectId);
  const others = (agents.data ?? []).filter((a) => a.id !== agentId);
  const chosen = f.values.sub_agents;
  const nameOf = (id: string) => others.find((a) => a.id === id)?.name ?? id;
  const pick = (ids: string[]) =>
    f.set({
      sub_agents: ids.map(
        (id): SubAgentDraft =>
          chosen.find((s) => s.agent_id === id) ?? {
            agent_id: id,
            description: '',
            requires_approval: false,
          },
      ),
    });
  const change = (i: number, patch: Partial<SubAgentDraft>) =>
    f.set({ sub_agents: chosen.map((s, j) => (j === i ? { ...s, ...patch } : s)) });
  return (
    <Stack gap="xs">
      <MultiSelect
        label="Sub-agents"
        description="Agents of this project the model may hand a task to"
        placeholder={chosen.length ? undefined : 'None'}
        data={others.map((a) => ({ value: a.id, label: a.name }))}
        value={chosen.map((s) => s.agent_id)}
        onChange={pick}
        searchable
        error={fieldErrorUnder(err, 'sub_agents')}
      />
      {chosen.map((s, i) => (
        <Group key={s.agent_id} align="flex-end" ml="xl">
          <TextInput
            style={{ flex: 1 }}
            label={`What ${nameOf(s.agent_id)} does`}
            placeholder="Its own description"
            value={s.description}
            onChange={(e) => change(i, { description: e.currentTarget.value })}
            error={fieldError(err, `sub_agents.${i}.description`)}
          />
          <Checkbox
            mb={8}
            label="Requires approval"
            aria-label={`${nameOf(s.agent_id)} requires approval`}
            title="Each call of this sub-agent waits for a person's approval"
            checked={s.requires_approval}
            onChange={(e) => change(i, { requires_approval: e.currentTarget.checked })}
            error={fieldError(err, `sub_agents.${i}.requires_approval`)}
          />
        </Group>
      ))}
    </Stack>
  );
}
