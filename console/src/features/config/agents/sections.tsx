import {
  Group,
  Input,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Textarea,
  TextInput,
} from '@mantine/core';
import { usePrompts } from '../../prompts/queries.js';
import { useModels } from '../models/queries.js';
import { useSchemas } from '../schemas/queries.js';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';
import type { PromptLabel as Label } from '../../../api/types.js';
import type { Fields } from '../../../components/resource-form.js';
import type { AgentDraft } from './draft.js';

export interface SectionProps {
  projectId: string;
  /** The form's values and their bindings. */
  f: Fields<AgentDraft>;
  /** The last save's error, for the messages bindings do not place. */
  err: unknown;
}

const LABELS = [
  { value: 'latest', label: 'latest' },
  { value: 'production', label: 'production' },
];

export function LabelPicker({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: Label;
  onChange: (l: Label) => void;
  error?: string;
}) {
  return (
    <Input.Wrapper label={label} error={error}>
      <div>
        <SegmentedControl
          aria-label={label}
          data={LABELS}
          value={value}
          onChange={(v) => onChange(v as Label)}
        />
      </div>
    </Input.Wrapper>
  );
}

/** The name, model, prompt (and which label of it), output schema, history and limits. */
export function BasicsSection({ projectId, f, err }: SectionProps) {
  const models = useModels(projectId);
  const prompts = usePrompts(projectId);
  const schemas = useSchemas(projectId);
  return (
    <Stack>
      <TextInput label="Name" required {...f.text('name')} data-autofocus />
      <Textarea label="Description" autosize minRows={1} {...f.text('description')} />
      <Select
        label="Model"
        required
        placeholder={models.data?.length ? 'Choose a model' : 'No model yet: add one in Models'}
        data={(models.data ?? []).map((m) => ({ value: m.id, label: `${m.name} (${m.model_id})` }))}
        searchable
        {...f.value('model_id')}
      />
      <Group grow align="flex-start">
        <Select
          label="Prompt"
          required
          placeholder={prompts.data?.length ? 'Choose a prompt' : 'No prompt yet: add one in Prompts'}
          data={(prompts.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
          searchable
          {...f.value('prompt_id')}
        />
        <LabelPicker label="Prompt label" {...f.value('prompt_label')} />
      </Group>
      <Select
        label="Output schema"
        description="Answers are JSON validating against it; empty for free text"
        placeholder="Free text"
        data={(schemas.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
        clearable
        {...f.value('schema_id')}
      />
      <Switch
        label="Keep history (earlier turns of the conversation go to the model)"
        checked={f.values.enable_history}
        onChange={(e) => f.set({ enable_history: e.currentTarget.checked })}
        error={fieldError(err, 'enable_history')}
      />
      {/* No clamping anywhere in this form: an out-of-range number is sent as typed and the API's message, with the bound, shows under it. */}
      <Group grow align="flex-start">
        <NumberInput
          clampBehavior="none"
          label="Max iterations"
          description="Model calls per turn (1–100)"
          placeholder="default"
          min={1}
          max={100}
          {...f.value('max_iterations')}
        />
        <NumberInput
          clampBehavior="none"
          label="Approval timeout (ms)"
          description="Undecided approvals are declined after this; empty: the server's default"
          min={1000}
          max={2_073_600_000}
          {...f.value('approval_timeout_ms')}
        />
      </Group>
    </Stack>
  );
}

/** How long conversations are kept within the model's context: not at all, by an LLM summary, or a window. */
export function SummarizerSection({ projectId, f, err }: SectionProps) {
  const { values: draft, set } = f;
  const models = useModels(projectId);
  const prompts = usePrompts(projectId);
  return (
    <Stack>
      <Input.Wrapper label="Summarizer" error={fieldError(err, 'summarizer_type')}>
        <div>
          <SegmentedControl
            aria-label="Summarizer"
            value={draft.summarizer_type}
            onChange={(v) => set({ summarizer_type: v })}
            data={[
              { value: 'none', label: 'None' },
              { value: 'llm', label: 'LLM summary' },
              { value: 'sliding_window', label: 'Sliding window' },
            ]}
          />
        </div>
      </Input.Wrapper>
      {draft.summarizer_type === 'llm' && (
        <>
          <Group grow align="flex-start">
            <NumberInput
              clampBehavior="none"
              label="Token threshold"
              description="Summarize when the transcript passes this many tokens"
              required
              min={1}
              {...f.value('llm_summarizer_token_threshold')}
            />
            <NumberInput
              clampBehavior="none"
              label="Keep recent messages"
              description="Left out of the summary, sent as they are"
              required
              min={1}
              {...f.value('llm_summarizer_keep_recent_count')}
            />
          </Group>
          <Group grow align="flex-start">
            <Select
              label="Summarizer prompt"
              required
              data={(prompts.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
              {...f.value('llm_summarizer_prompt_id')}
            />
            <LabelPicker
              label="Summarizer prompt label"
              value={draft.llm_summarizer_prompt_label ?? 'latest'}
              onChange={(l) => set({ llm_summarizer_prompt_label: l })}
              error={fieldError(err, 'llm_summarizer_prompt_label')}
            />
          </Group>
          <Select
            label="Summarizer model"
            description="Empty: the agent's own model"
            data={(models.data ?? []).map((m) => ({ value: m.id, label: m.name }))}
            clearable
            {...f.value('llm_summarizer_model_id')}
          />
        </>
      )}
      {draft.summarizer_type === 'sliding_window' && (
        <NumberInput
          clampBehavior="none"
          label="Messages kept"
          description="Only the most recent messages go to the model"
          required
          min={1}
          {...f.value('sliding_window_keep_count')}
        />
      )}
    </Stack>
  );
}

/** The sandbox tool (execute_bash_commands): on or off, its image, and whether each command needs approval. */
export function SandboxSection({ f, err }: SectionProps) {
  const sb = f.values.sandbox;
  const setSb = (patch: Partial<AgentDraft['sandbox']>) => f.set({ sandbox: { ...sb, ...patch } });
  return (
    <Stack>
      <Switch
        label="Sandbox enabled (the model may run shell commands in a per-session container)"
        checked={sb.enabled}
        onChange={(e) => setSb({ enabled: e.currentTarget.checked })}
        error={fieldError(err, 'sandbox.enabled') ?? fieldError(err, 'sandbox')}
      />
      <TextInput
        label="Docker image"
        description="Empty: the server's SANDBOX_DEFAULT_IMAGE"
        placeholder="ghcr.io/acme/sandbox:1.2"
        disabled={!sb.enabled}
        value={sb.docker_image}
        onChange={(e) => setSb({ docker_image: e.currentTarget.value })}
        error={fieldErrorUnder(err, 'sandbox.docker_image')}
      />
      <Switch
        label="Every sandbox command needs approval"
        disabled={!sb.enabled}
        checked={sb.require_approval}
        onChange={(e) => setSb({ require_approval: e.currentTarget.checked })}
        error={fieldError(err, 'sandbox.require_approval')}
      />
    </Stack>
  );
}
