import { Button, Group, JsonInput, Stack, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import type { JsonSchemaDoc } from '../../../api/types.js';
import { fieldError, fieldErrorUnder, unplacedError } from '../shared/form.js';
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
export function SchemaForm({
  projectId,
  schema,
  onDone,
}: {
  projectId: string;
  schema?: JsonSchemaDoc;
  onDone: () => void;
}) {
  const save = useSaveSchema(projectId, schema?.id);
  const [name, setName] = useState(schema?.name ?? '');
  const [description, setDescription] = useState(schema?.description ?? '');
  const [text, setText] = useState(schema ? JSON.stringify(schema.schema, null, 2) : EXAMPLE);
  const problem = text.trim() === '' ? 'Required' : schemaTextProblem(text);
  const err = save.error;
  const submit = () => {
    if (problem) return;
    save.mutate(
      {
        name: name.trim(),
        description: description.trim() === '' ? null : description,
        schema: JSON.parse(text) as Record<string, unknown>,
      },
      { onSuccess: onDone },
    );
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
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(err, 'name')}
          data-autofocus
        />
        <Textarea
          label="Description"
          autosize
          minRows={1}
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
          error={fieldError(err, 'description')}
        />
        <JsonInput
          label="JSON Schema"
          description="Draft 2020-12; agents with this schema answer in JSON that validates against it"
          required
          autosize
          minRows={8}
          maxRows={24}
          formatOnBlur
          value={text}
          onChange={setText}
          error={problem ?? fieldErrorUnder(err, 'schema')}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
        />
        <ErrorAlert error={unplacedError(err, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending} disabled={!!problem}>
            {schema ? 'Save schema' : 'Create schema'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
