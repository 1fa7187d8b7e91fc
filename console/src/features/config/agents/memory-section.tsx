import { Checkbox, JsonInput } from '@mantine/core';
import { fieldError } from '../../../components/field-errors.js';
import type { SectionProps } from './sections.js';

/** Whether the turn offers the memory tools over the project's memory store. */
export function MemorySection({ f, err }: SectionProps) {
  return (
    <Checkbox
      label="Memory tools"
      description="Each turn offers memory_save and memory_search over the project's memory store (semantic search with the project's embedding model, else matching text)"
      checked={f.values.memory_tools}
      onChange={(e) => f.set({ memory_tools: e.currentTarget.checked })}
      error={fieldError(err, 'memory_tools')}
    />
  );
}

/** Defaults for the prompts' template variables; a conversation's own context wins over them. */
export function ContextSection({ f }: SectionProps) {
  return (
    <JsonInput
      label="Context"
      mt="md"
      description="Template variable defaults, as a JSON object; a conversation's context overrides them"
      placeholder='{ "customer": "Acme" }'
      autosize
      minRows={2}
      formatOnBlur
      validationError="Not valid JSON"
      {...f.value('context')}
    />
  );
}
