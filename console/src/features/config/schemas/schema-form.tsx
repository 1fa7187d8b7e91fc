import { JsonInput, Textarea, TextInput } from '@mantine/core';
import type { JsonSchemaDoc } from '../../../api/types.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { useSaveSchema } from './queries.js';

const PLACED = ['name', 'description', 'schema'];
const EXAMPLE = `{
  "type": "object",
  "properties": { "answer": { "type": "string" } },
  "required": ["answer"]
}`;

/** What is wrong with the text as a schema object, before the API (ajv) checks the schema itself. */
export function schemaTextProblem(text: string): string | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return 'A JSON Schema is a JSON object';
    return undefined;
  } catch (e) {
    return `Not valid JSON: ${(e as Error).message}`;
  }
}

/** Create or edit a schema; the JSON is checked as you type, and the API compiles it (draft 2020-12). */
export function SchemaForm({ projectId, item: schema, onDone }: ItemFormProps<JsonSchemaDoc>) {
  const save = useSaveSchema(projectId, schema?.id);
  const f = useFields(
    () => ({
      name: schema?.name ?? '',
      description: schema?.description ?? '',
      schema: schema ? JSON.stringify(schema.schema, null, 2) : EXAMPLE,
    }),
    save.error,
  );
  const text = f.values.schema;
  const problem = text.trim() === '' ? 'Required' : schemaTextProblem(text);
  const submit = () => {
    if (problem) return;
    save.mutate(
      {
        name: f.values.name.trim(),
        description: f.values.description.trim() === '' ? null : f.values.description,
        schema: JSON.parse(text) as Record<string, unknown>,
      },
      { onSuccess: onDone },
    );
  };
  const editor = f.value('schema');
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={schema ? 'Save schema' : 'Create schema'}
      submitDisabled={!!problem}
      onCancel={onDone}
    >
      <TextInput label="Name" required {...f.text('name')} data-autofocus />
      <Textarea label="Description" autosize minRows={1} {...f.text('description')} />
      <JsonInput
        label="JSON Schema"
        description="Draft 2020-12; agents with this schema answer in JSON that validates against it"
        required
        autosize
        minRows={8}
        maxRows={24}
        formatOnBlur
        {...editor}
        error={problem ?? editor.error}
        styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      />
    </ResourceForm>
  );
}
