import {
  ActionIcon,
  Button,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { EvalBody, EvalVariantBody } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fieldError, fieldErrorUnder, numberOrNull, unplacedError } from '../../components/field-errors.js';
import { useAgents } from '../config/agents/queries.js';
import { useModels } from '../config/models/queries.js';
import { usePrompts } from '../prompts/queries.js';
import { useConversations } from '../sessions/queries.js';
import { useStartEval } from './queries.js';

interface VariantDraft {
  name: string;
  promptVersion: string | number;
  modelId: string | null;
  temperature: string | number;
}

const PLACED = ['agent_id', 'conversation_ids', 'body', 'variants', 'concurrency', 'judge', 'thresholds'];

function variantBody(v: VariantDraft): EvalVariantBody {
  const version = numberOrNull(v.promptVersion);
  const temperature = numberOrNull(v.temperature);
  return {
    name: v.name.trim(),
    ...(version !== null ? { prompt_version: version } : {}),
    ...(v.modelId ? { model_id: v.modelId } : {}),
    ...(temperature !== null ? { parameters: { temperature } } : {}),
  };
}

const optionalNumber = (v: string | number) => numberOrNull(v) ?? undefined;

/** One variant's inputs, its API field errors under each. */
function VariantRow(props: {
  index: number;
  value: VariantDraft;
  models: Array<{ value: string; label: string }>;
  error: unknown;
  onChange: (v: VariantDraft) => void;
  onRemove?: () => void;
}) {
  const { index, value, error, onChange } = props;
  const at = `variants.${index}`;
  return (
    <Group align="flex-end" wrap="nowrap" aria-label={`Variant ${index + 1}`} role="group">
      <TextInput
        label="Variant name"
        value={value.name}
        onChange={(e) => onChange({ ...value, name: e.currentTarget.value })}
        error={fieldError(error, `${at}.name`)}
        w={160}
      />
      <NumberInput
        label="Prompt version"
        placeholder="Agent's"
        min={1}
        value={value.promptVersion}
        onChange={(v) => onChange({ ...value, promptVersion: v })}
        error={fieldError(error, `${at}.prompt_version`)}
        w={130}
      />
      <Select
        label="Model"
        placeholder="Agent's"
        data={props.models}
        value={value.modelId}
        onChange={(v) => onChange({ ...value, modelId: v })}
        error={fieldError(error, `${at}.model_id`)}
        clearable
        w={200}
      />
      <NumberInput
        label="Temperature"
        placeholder="Model's"
        min={0}
        max={2}
        step={0.1}
        decimalScale={2}
        value={value.temperature}
        onChange={(v) => onChange({ ...value, temperature: v })}
        error={fieldErrorUnder(error, `${at}.parameters`)}
        w={120}
      />
      {props.onRemove ? (
        <ActionIcon
          variant="subtle"
          color="red"
          onClick={props.onRemove}
          aria-label={`Remove variant ${index + 1}`}
          mb={4}
        >
          ✕
        </ActionIcon>
      ) : null}
    </Group>
  );
}

/**
 * A new eval: the agent, its recorded conversations (one given in the address
 * comes chosen), variants, and optionally a judge and thresholds. Opens the
 * eval's page once started.
 */
export function StartEvalForm(props: {
  projectId: string;
  opened: boolean;
  onClose: () => void;
  initial: { agentId?: string; conversationIds?: string[] };
}) {
  const navigate = useNavigate();
  const [agentId, setAgentId] = useState<string | null>(props.initial.agentId ?? null);
  const [conversationIds, setConversationIds] = useState<string[]>(props.initial.conversationIds ?? []);
  const [variants, setVariants] = useState<VariantDraft[]>([
    { name: 'current', promptVersion: '', modelId: null, temperature: '' },
    { name: 'candidate', promptVersion: '', modelId: null, temperature: '' },
  ]);
  const [concurrency, setConcurrency] = useState<string | number>(4);
  const [judgeModel, setJudgeModel] = useState<string | null>(null);
  const [judgePrompt, setJudgePrompt] = useState<string | null>(null);
  const [minMatch, setMinMatch] = useState<string | number>('');
  const [minJudge, setMinJudge] = useState<string | number>('');
  const [maxCost, setMaxCost] = useState<string | number>('');

  const agents = useAgents(props.projectId);
  const models = useModels(props.projectId);
  const prompts = usePrompts(props.projectId);
  const conversations = useConversations(props.projectId, { agentId: agentId ?? undefined, offset: 0 });
  const start = useStartEval(props.projectId);
  const error = start.error;

  const modelOptions = (models.data ?? []).map((m) => ({ value: m.id, label: m.name }));
  const conversationOptions = [
    ...new Set([...conversationIds, ...(conversations.data ?? []).map((c) => c.id ?? '')]),
  ]
    .filter(Boolean)
    .map((id) => ({ value: id, label: id }));

  const submit = () => {
    const thresholds = {
      ...(optionalNumber(minMatch) !== undefined ? { min_exact_match_rate: optionalNumber(minMatch) } : {}),
      ...(optionalNumber(minJudge) !== undefined ? { min_judge_score: optionalNumber(minJudge) } : {}),
      ...(optionalNumber(maxCost) !== undefined ? { max_cost_ratio: optionalNumber(maxCost) } : {}),
    };
    const body: EvalBody = {
      agent_id: agentId ?? '',
      conversation_ids: conversationIds,
      variants: variants.map(variantBody),
      concurrency: numberOrNull(concurrency) ?? 4,
      ...(judgeModel || judgePrompt
        ? { judge: { model_id: judgeModel ?? '', prompt_id: judgePrompt ?? '' } }
        : {}),
      ...(Object.keys(thresholds).length ? { thresholds } : {}),
    };
    start.mutate(body, { onSuccess: (ev) => void navigate(`/evals/${ev.id}`) });
  };

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="New eval" size="xl">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          Each chosen conversation&apos;s user turns are replayed against every variant in scratch
          conversations; tool calls are answered from the recording.
        </Text>
        <Select
          label="Agent"
          data={(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))}
          value={agentId}
          onChange={(v) => {
            setAgentId(v);
            setConversationIds([]);
          }}
          error={fieldError(error, 'agent_id')}
          searchable
        />
        <MultiSelect
          label="Conversations"
          placeholder={agentId ? 'Recorded conversations of the agent' : 'Choose the agent first'}
          data={conversationOptions}
          value={conversationIds}
          onChange={setConversationIds}
          error={fieldError(error, 'conversation_ids') ?? fieldError(error, 'body')}
          searchable
        />
        <Title order={6}>Variants</Title>
        {variants.map((v, i) => (
          <VariantRow
            key={i}
            index={i}
            value={v}
            models={modelOptions}
            error={error}
            onChange={(next) => setVariants(variants.map((old, j) => (j === i ? next : old)))}
            onRemove={variants.length > 1 ? () => setVariants(variants.filter((_, j) => j !== i)) : undefined}
          />
        ))}
        <Button
          variant="subtle"
          w="fit-content"
          onClick={() =>
            setVariants([
              ...variants,
              { name: `variant ${variants.length + 1}`, promptVersion: '', modelId: null, temperature: '' },
            ])
          }
        >
          Add a variant
        </Button>
        <Group align="flex-end">
          <NumberInput
            label="Concurrency"
            min={1}
            max={50}
            value={concurrency}
            onChange={setConcurrency}
            error={fieldError(error, 'concurrency')}
            w={120}
          />
          <Select
            label="Judge model"
            placeholder="No judge"
            data={modelOptions}
            value={judgeModel}
            onChange={setJudgeModel}
            error={fieldError(error, 'judge.model_id')}
            clearable
            w={200}
          />
          <Select
            label="Judge prompt"
            placeholder="No judge"
            data={(prompts.data ?? []).map((p) => ({ value: p.id ?? '', label: p.name ?? '' }))}
            value={judgePrompt}
            onChange={setJudgePrompt}
            error={fieldError(error, 'judge.prompt_id')}
            clearable
            w={200}
          />
        </Group>
        <Group align="flex-end">
          <NumberInput
            label="Min exact match rate"
            min={0}
            max={1}
            step={0.05}
            decimalScale={2}
            value={minMatch}
            onChange={setMinMatch}
            error={fieldError(error, 'thresholds.min_exact_match_rate')}
            w={170}
          />
          <NumberInput
            label="Min judge score"
            min={0}
            max={1}
            step={0.05}
            decimalScale={2}
            value={minJudge}
            onChange={setMinJudge}
            error={fieldError(error, 'thresholds.min_judge_score')}
            w={150}
          />
          <NumberInput
            label="Max cost ratio"
            min={0}
            step={0.1}
            decimalScale={2}
            value={maxCost}
            onChange={setMaxCost}
            error={fieldError(error, 'thresholds.max_cost_ratio')}
            w={150}
          />
        </Group>
        <ErrorAlert error={unplacedError(error, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Close
          </Button>
          <Button onClick={submit} loading={start.isPending}>
            Start eval
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
