import { Code, Text } from '@mantine/core';
import type { JsonSchemaDoc } from '../../../api/types.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { useDeleteSchema, useSchemas } from './queries.js';
import { SchemaForm } from './schema-form.js';

function summary(s: Record<string, unknown>): string {
  const props = s.properties && typeof s.properties === 'object' ? Object.keys(s.properties) : [];
  const type = typeof s.type === 'string' ? s.type : 'schema';
  return props.length ? `${type} { ${props.slice(0, 6).join(', ')}${props.length > 6 ? ', …' : ''} }` : type;
}

function Schemas({ projectId }: { projectId: string }) {
  return (
    <ResourcePage<JsonSchemaDoc>
      need="develop"
      title="Schemas"
      what="schema"
      intro="JSON Schemas for structured output: an agent with a schema answers in JSON that validates against it."
      query={useSchemas(projectId)}
      empty={{
        title: 'No schema in this project',
        body: 'Add a JSON Schema, then choose it on an agent to get structured answers.',
      }}
      columns={[
        {
          header: 'Description',
          cell: (s) => (
            <Text size="sm" lineClamp={2}>
              {s.description ?? '—'}
            </Text>
          ),
        },
        { header: 'Shape', cell: (s) => <Code>{summary(s.schema)}</Code> },
      ]}
      remove={useDeleteSchema(projectId)}
      modalSize="xl"
      form={(item, close) => <SchemaForm projectId={projectId} item={item} onDone={close} />}
    />
  );
}

export function SchemasPage() {
  return <NeedProject>{(p) => <Schemas key={p.id} projectId={p.id} />}</NeedProject>;
}
