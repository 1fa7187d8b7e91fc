import { Alert, Badge, Fieldset } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import type { Agent } from '../../../api/types.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { CronsSection } from './crons-section.js';
import { bodyOf, contextParses, draftOf, type AgentDraft } from './draft.js';
import { useAgentWarnings, WARNED_IN, Warnings } from './guardrails.js';
import { A2aSection } from './a2a-section.js';
import { AccessSection, SubAgentsSection } from './links-section.js';
import { McpSection } from './mcp-section.js';
import { ContextSection, MemorySection } from './memory-section.js';
import { uploadSkill, useSaveAgent } from './queries.js';
import { BasicsSection, SandboxSection, SummarizerSection } from './sections.js';
import { SkillsSection, type PendingSkill } from './skills-section.js';
import { VersionsSection } from './versions-section.js';
import { BudgetSection, DecisionSection, McpWaitsSection } from './waits-section.js';

// Every field the form shows next to an input; the rest of an error goes in the alert.
const PLACED = [
  'name',
  'description',
  'model_id',
  'prompt_id',
  'prompt_label',
  'schema_id',
  'enable_history',
  'max_iterations',
  'approval_timeout_ms',
  'summarizer_type',
  'llm_summarizer_token_threshold',
  'llm_summarizer_keep_recent_count',
  'llm_summarizer_prompt_id',
  'llm_summarizer_prompt_label',
  'llm_summarizer_model_id',
  'sliding_window_keep_count',
  'mcp_servers',
  'sandbox',
  'budget',
  'budget_wait_timeout_ms',
  'non_idempotent_tools',
  'decision_timeout_ms',
  'input_timeout_ms',
  'authorization_timeout_ms',
  'memory_tools',
  'context',
  'expose',
  'sub_agents',
  'a2a_agents',
];

/**
 * The agent's form, started again from the agent a pin puts in force: the
 * inputs then show the pinned version's settings, not the ones before it.
 */
export function AgentForm(props: ItemFormProps<Agent>) {
  const [pinned, setPinned] = useState<Agent>();
  const item = pinned ?? props.item;
  return <AgentFormBody key={item?.version ?? 'new'} {...props} item={item} onPinned={setPinned} />;
}

/** Every field of agent creation, in sections; skills upload after the agent exists. */
function AgentFormBody({
  projectId,
  item: agent,
  onDone,
  onPinned,
}: ItemFormProps<Agent> & { onPinned: (agent: Agent) => void }) {
  const [created, setCreated] = useState<Agent>();
  const current = agent ?? created;
  const save = useSaveAgent(projectId, current?.id);
  const err = save.error;
  const f = useFields<AgentDraft>(() => draftOf(agent), err);
  const [pending, setPending] = useState<PendingSkill[]>([]);
  const [skillError, setSkillError] = useState<unknown>();
  const props = { projectId, f, err };
  const warnings = useAgentWarnings(projectId, f.values).data ?? [];

  const uploadPending = async (agentId: string) => {
    for (const [i, s] of pending.entries()) {
      try {
        await uploadSkill(agentId, s.name, s.zip);
      } catch (e) {
        // The agent exists now: the form turns into its edit form, showing what failed.
        setPending(pending.slice(i + 1));
        setSkillError(e);
        return false;
      }
    }
    return true;
  };

  const submit = async () => {
    if (!contextParses(f.values.context)) return; // its input says so
    const saved = await save.mutateAsync(bodyOf(f.values)).catch(() => undefined);
    if (!saved) return; // the form shows the error
    if (!current) setCreated(saved);
    if (await uploadPending(saved.id)) onDone();
  };

  return (
    <ResourceForm
      onSubmit={() => void submit()}
      save={save}
      placed={PLACED}
      submitLabel={current ? 'Save agent' : 'Create agent'}
      onCancel={onDone}
      cancelLabel={created ? 'Close' : 'Cancel'}
    >
      <Fieldset legend="Agent">
        {current && (
          <Badge variant="light" mb="sm">
            version {current.version} in force
          </Badge>
        )}
        <BasicsSection {...props} />
        <ContextSection {...props} />
        <Warnings of={warnings} fields={WARNED_IN.agent} />
      </Fieldset>
      <Fieldset legend="Summarizer">
        <SummarizerSection {...props} />
        <Warnings of={warnings} fields={WARNED_IN.summarizer} />
      </Fieldset>
      <Fieldset legend="Memory">
        <MemorySection {...props} />
      </Fieldset>
      <Fieldset legend="MCP servers">
        <McpSection {...props} />
      </Fieldset>
      <Fieldset legend="A2A agents">
        <A2aSection {...props} />
      </Fieldset>
      <Fieldset legend="Access">
        <AccessSection {...props} agentId={current?.id} />
      </Fieldset>
      <Fieldset legend="Sub-agents">
        <SubAgentsSection {...props} agentId={current?.id} />
      </Fieldset>
      <Fieldset legend="Sandbox">
        <SandboxSection {...props} />
        <Warnings of={warnings} fields={WARNED_IN.sandbox} />
      </Fieldset>
      <Fieldset legend="Budget">
        <BudgetSection {...props} />
      </Fieldset>
      <Fieldset legend="Calls whose outcome is unknown">
        <DecisionSection {...props} />
      </Fieldset>
      <Fieldset legend="Calls waiting for a person (MCP questions and authorization)">
        <McpWaitsSection {...props} />
      </Fieldset>
      <Fieldset legend="Skills">
        <SkillsSection agentId={current?.id} pending={pending} setPending={setPending} />
        {!!skillError && (
          <Alert color="red" mt="sm" title="The agent was created, but a skill upload failed">
            <ErrorAlert error={skillError} />
          </Alert>
        )}
      </Fieldset>
      <Fieldset legend="Versions">
        <VersionsSection projectId={projectId} agentId={current?.id} onPinned={onPinned} />
      </Fieldset>
      <Fieldset legend="Schedules">
        <CronsSection projectId={projectId} agentId={current?.id} />
      </Fieldset>
      <Warnings of={warnings} />
    </ResourceForm>
  );
}
