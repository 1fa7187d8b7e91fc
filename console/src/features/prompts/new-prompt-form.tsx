import { Button, Checkbox, Group, Stack, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client.js';
import { ErrorAlert } from '../../components/error-alert.js';
import type { Prompt, PromptVersion } from '../../api/types.js';
import { useCreatePrompt, useCreateVersion } from './queries.js';

/** The API's message for a field: a validation error naming it, or a conflict naming it (a name taken). */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.details.field === field && typeof error.details.reason === 'string') return error.details.reason;
  return error.fieldMessage(field);
}

function otherError(error: unknown, placed: string[]): unknown {
  if (!(error instanceof ApiError)) return error;
  const named = error.fields.length ? error.fields.map((f) => f.field) : [error.details.field];
  return named.every((f) => typeof f === 'string' && placed.includes(f)) ? null : error;
}

const PLACED = ['name', 'template', 'commit_message', 'label'];

/**
 * A new prompt (with `name`) or the next version of one: the template, a
 * commit message, and whether it takes the production label at once.
 */
export function PromptVersionForm({
  projectId,
  prompt,
  base,
  onDone,
}: {
  projectId: string;
  prompt?: Prompt;
  base?: PromptVersion;
  onDone: (name: string) => void;
}) {
  const create = useCreatePrompt(projectId);
  const addVersion = useCreateVersion(projectId, prompt?.name ?? '');
  const save = prompt ? addVersion : create;
  const [name, setName] = useState('');
  const [template, setTemplate] = useState(base?.template ?? '');
  const [message, setMessage] = useState(prompt ? '' : 'First version');
  const [production, setProduction] = useState(false);
  const err = save.error;
  const submit = () => {
    const body = {
      template,
      commit_message: message,
      ...(production && { label: 'production' as const }),
    };
    if (prompt) addVersion.mutate(body, { onSuccess: () => onDone(prompt.name) });
    else create.mutate({ ...body, name: name.trim() }, { onSuccess: (p) => onDone(p.name) });
  };
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Stack>
        {!prompt && (
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError(err, 'name')}
            data-autofocus
          />
        )}
        <Textarea
          label="Template"
          description="Text with {{variable}} placeholders, filled from the conversation's context"
          required
          autosize
          minRows={8}
          maxRows={24}
          value={template}
          onChange={(e) => setTemplate(e.currentTarget.value)}
          error={fieldError(err, 'template')}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          data-autofocus={prompt ? true : undefined}
        />
        <TextInput
          label="Commit message"
          description="What changed, for the version list"
          required
          value={message}
          onChange={(e) => setMessage(e.currentTarget.value)}
          error={fieldError(err, 'commit_message')}
        />
        <Checkbox
          label="Label it production now (agents on the production label switch to it)"
          checked={production}
          onChange={(e) => setProduction(e.currentTarget.checked)}
        />
        <ErrorAlert error={otherError(err, PLACED)} />
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending}>
            {prompt ? `Create version ${(prompt.latest_version ?? 0) + 1}` : 'Create prompt'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
