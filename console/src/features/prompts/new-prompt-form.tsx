import { Checkbox, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ResourceForm, useFields } from '../../components/resource-form.js';
import type { Prompt, PromptVersion } from '../../api/types.js';
import { useCreatePrompt, useCreateVersion } from './queries.js';

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
  const f = useFields(
    () => ({ name: '', template: base?.template ?? '', commit_message: prompt ? '' : 'First version' }),
    save.error,
  );
  const [production, setProduction] = useState(false);
  const submit = () => {
    const body = {
      template: f.values.template,
      commit_message: f.values.commit_message,
      ...(production && { label: 'production' as const }),
    };
    if (prompt) addVersion.mutate(body, { onSuccess: () => onDone(prompt.name) });
    else create.mutate({ ...body, name: f.values.name.trim() }, { onSuccess: (p) => onDone(p.name) });
  };
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={prompt ? `Create version ${(prompt.latest_version ?? 0) + 1}` : 'Create prompt'}
    >
      {!prompt && <TextInput label="Name" required {...f.text('name')} data-autofocus />}
      <Textarea
        label="Template"
        description="Text with {{variable}} placeholders, filled from the conversation's context"
        required
        autosize
        minRows={8}
        maxRows={24}
        {...f.text('template')}
        styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
        data-autofocus={prompt ? true : undefined}
      />
      <TextInput
        label="Commit message"
        description="What changed, for the version list"
        required
        {...f.text('commit_message')}
      />
      <Checkbox
        label="Label it production now (agents on the production label switch to it)"
        checked={production}
        onChange={(e) => setProduction(e.currentTarget.checked)}
      />
    </ResourceForm>
  );
}
