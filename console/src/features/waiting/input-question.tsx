import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMemo, useState } from 'react';
import type { RunPause } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fieldErrorUnder, unplacedError } from '../../components/field-errors.js';
import { useAnswerInput } from './queries.js';
import {
  askedFields,
  contentOf,
  initialValues,
  inputType,
  type AskedField,
  type AskedValue,
  type AskedValues,
} from './requested-schema.js';
import { useCan } from '../../app/auth.js';

type Answer = ReturnType<typeof useAnswerInput>;
type Details = NonNullable<RunPause['details']>;

/** One field of the server's form, as its schema says; the API's message for `content.<name>` under it. */
function AskedInput({
  field: f,
  value,
  onChange,
  error,
}: {
  field: AskedField;
  value: AskedValue | undefined;
  onChange: (v: AskedValue) => void;
  error: string | undefined;
}) {
  const common = { label: f.label, description: f.description, required: f.required, error };
  if (f.kind === 'boolean')
    return (
      <Checkbox
        label={f.label}
        description={f.description}
        checked={value === true}
        onChange={(e) => onChange(e.currentTarget.checked)}
        error={error}
      />
    );
  if (f.kind === 'choice')
    return (
      <Select
        {...common}
        data={f.choices ?? []}
        clearable={!f.required}
        value={typeof value === 'string' && value !== '' ? value : null}
        onChange={(v) => onChange(v ?? '')}
      />
    );
  if (f.kind === 'choices')
    return (
      <MultiSelect
        {...common}
        data={f.choices ?? []}
        value={Array.isArray(value) ? value : []}
        onChange={onChange}
      />
    );
  if (f.kind === 'number' || f.kind === 'integer')
    return (
      <NumberInput
        {...common}
        clampBehavior="none"
        allowDecimal={f.kind === 'number'}
        min={f.min}
        max={f.max}
        value={typeof value === 'number' || typeof value === 'string' ? value : ''}
        onChange={onChange}
      />
    );
  return (
    <TextInput
      {...common}
      type={inputType(f.format)}
      value={typeof value === 'string' ? value : ''}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}

/** The form the server's `requested_schema` describes, with Submit, Decline and Cancel. */
function AskedForm({ details, answer }: { details: Details; answer: Answer }) {
  const schema = details.requested_schema;
  const fields = useMemo(() => askedFields(schema), [schema]);
  const [values, setValues] = useState<AskedValues>(() => initialValues(schema, fields));
  const placed = fields.map((f) => `content.${f.name}`);
  const pending = (action: string) => answer.isPending && answer.variables?.action === action;
  return (
    <form
      noValidate
      aria-label="Answer the server"
      onSubmit={(e) => {
        e.preventDefault();
        answer.mutate({ action: 'accept', content: contentOf(fields, values) });
      }}
    >
      <Stack gap="xs" maw={640}>
        {fields.map((f) => (
          <AskedInput
            key={f.name}
            field={f}
            value={values[f.name]}
            onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))}
            error={fieldErrorUnder(answer.error, `content.${f.name}`)}
          />
        ))}
        <Group gap="xs">
          <Button size="xs" type="submit" loading={pending('accept')} disabled={answer.isPending}>
            Submit
          </Button>
          <DeclineButtons answer={answer} />
        </Group>
        <ErrorAlert error={unplacedError(answer.error, placed)} />
      </Stack>
    </form>
  );
}

/** Decline (the person would not answer) and Cancel (they dismissed the question). */
function DeclineButtons({ answer }: { answer: Answer }) {
  const pending = (action: string) => answer.isPending && answer.variables?.action === action;
  return (
    <>
      <Button
        size="xs"
        variant="light"
        color="red"
        loading={pending('decline')}
        disabled={answer.isPending}
        onClick={() => answer.mutate({ action: 'decline' })}
      >
        Decline
      </Button>
      <Button
        size="xs"
        variant="default"
        loading={pending('cancel')}
        disabled={answer.isPending}
        onClick={() => answer.mutate({ action: 'cancel' })}
      >
        Cancel
      </Button>
    </>
  );
}

/** A page the server wants the person to open (URL mode): Done once they did what it asks, or Decline. */
function AskedPage({ details, answer }: { details: Details; answer: Answer }) {
  return (
    <Stack gap="xs">
      {details.url && (
        <Anchor href={details.url} target="_blank" rel="noopener noreferrer" size="sm" w="fit-content">
          Open {safeHost(details.url)}
        </Anchor>
      )}
      <Group gap="xs">
        <Button
          size="xs"
          loading={answer.isPending && answer.variables?.action === 'accept'}
          disabled={answer.isPending}
          onClick={() => answer.mutate({ action: 'accept' })}
        >
          Done
        </Button>
        <Button
          size="xs"
          variant="light"
          color="red"
          loading={answer.isPending && answer.variables?.action === 'decline'}
          disabled={answer.isPending}
          onClick={() => answer.mutate({ action: 'decline' })}
        >
          Decline
        </Button>
      </Group>
      <ErrorAlert error={answer.error} />
    </Stack>
  );
}

/** The host a link leads to, so a person sees where they are sent before they click. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the page';
  }
}

/**
 * An MCP server's question during a tool call: its message, then a form to
 * fill or a page to open. Answering resumes the call.
 */
export function InputQuestion({ runId, pause }: { runId: string; pause: RunPause }) {
  const answer = useAnswerInput(runId);
  const d = pause.details ?? {};
  const server = typeof d.server === 'string' ? d.server : undefined;
  const operates = useCan()('operate');
  return (
    <Stack gap="xs">
      <Group gap={6}>
        <Text size="sm">The tool</Text>
        <Code>{d.name ?? d.call_id}</Code>
        {server && (
          <Badge size="xs" variant="light">
            {server}
          </Badge>
        )}
        <Text size="sm">asks:</Text>
      </Group>
      <Text size="sm" fw={500} style={{ whiteSpace: 'pre-wrap' }} data-testid="input-message">
        {d.message ?? '(no message)'}
      </Text>
      {!operates ? null : d.mode === 'url' ? (
        <AskedPage details={d} answer={answer} />
      ) : (
        <AskedForm details={d} answer={answer} />
      )}
    </Stack>
  );
}

/** Which question a pause is (the call and its place in it): a new question gets a fresh form. */
export function questionKey(pause: RunPause): string {
  const d = pause.details ?? {};
  return `${d.call_id ?? ''}-${typeof d.seq === 'number' ? d.seq : 0}`;
}
