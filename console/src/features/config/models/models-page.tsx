import { Badge, Code, Text } from '@mantine/core';
import type { Model } from '../../../api/types.js';
import { formatUsd } from '../../../lib/money.js';
import { useProviders } from '../providers/queries.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { ModelForm } from './model-form.js';
import { useDeleteModel, useModels } from './queries.js';

function pricing(m: Model) {
  if (!m.pricing)
    return (
      <Text c="dimmed" size="sm">
        built-in table
      </Text>
    );
  return `${formatUsd(m.pricing.input_per_million_usd ?? 0)} / ${formatUsd(m.pricing.output_per_million_usd ?? 0)}`;
}

function Models({ projectId }: { projectId: string }) {
  const providers = useProviders();
  const providerName = (id: string | null) =>
    id ? (providers.data?.find((p) => p.id === id)?.name ?? id) : 'only one of its type';
  return (
    <ResourcePage<Model>
      need="admin"
      title="Models"
      what="model"
      intro="Models this project's agents use: the provider-side model id, the provider, sampling parameters and pricing (for cost in usage and traces)."
      query={useModels(projectId)}
      empty={{
        title: 'No model in this project',
        body: 'Add a model (for example gpt-4o-mini on your OpenAI provider) so agents can use it.',
      }}
      columns={[
        { header: 'Model id', cell: (m) => <Code>{m.model_id}</Code> },
        {
          header: 'Provider',
          cell: (m) => (
            <>
              <Badge variant="light" mr={6}>
                {m.provider_type}
              </Badge>
              {providerName(m.provider_id)}
            </>
          ),
        },
        { header: 'Pricing (per 1M in / out)', cell: pricing },
        {
          header: 'Parameters',
          cell: (m) => (Object.keys(m.parameters).length ? <Code>{JSON.stringify(m.parameters)}</Code> : '—'),
        },
      ]}
      remove={useDeleteModel(projectId)}
      form={(item, close) => <ModelForm projectId={projectId} item={item} onDone={close} />}
    />
  );
}

export function ModelsPage() {
  return <NeedProject>{(p) => <Models key={p.id} projectId={p.id} />}</NeedProject>;
}
