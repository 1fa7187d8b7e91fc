import { TextInput } from '@mantine/core';
import type { A2aAgent } from '../../../api/types.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { fromPairs, KeyValues, toPairs } from '../shared/key-values.js';
import { useSaveA2aAgent } from './queries.js';

const PLACED = ['name', 'card_url', 'headers'];

/** Create or edit a remote A2A agent: where its card is, and the headers it needs (stored encrypted). */
export function A2aForm({ projectId, item: agent, onDone }: ItemFormProps<A2aAgent>) {
  const save = useSaveA2aAgent(projectId, agent?.id);
  const f = useFields(
    () => ({ name: agent?.name ?? '', card_url: agent?.card_url ?? '', headers: toPairs(agent?.headers) }),
    save.error,
  );
  const submit = () =>
    save.mutate(
      {
        name: f.values.name.trim(),
        card_url: f.values.card_url.trim(),
        headers: fromPairs(f.values.headers),
      },
      { onSuccess: onDone },
    );
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={agent ? 'Save A2A agent' : 'Create A2A agent'}
      onCancel={onDone}
    >
      <TextInput
        label="Name"
        description="prefixes its tools' names"
        required
        {...f.text('name')}
        data-autofocus
      />
      <TextInput
        label="Agent card URL"
        placeholder="https://agent.example.com/.well-known/agent-card.json"
        required
        {...f.text('card_url')}
      />
      <KeyValues
        label="Headers"
        description="Sent with every request, the card's included (e.g. Authorization); sensitive values read back as [redacted]"
        {...f.value('headers')}
      />
    </ResourceForm>
  );
}
