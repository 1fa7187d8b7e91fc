import { TextInput } from '@mantine/core';
import type { A2aAgent } from '../../../api/types.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { fromPairs, KeyValues, toPairs } from '../shared/key-values.js';
import { OAuthFields, oauthBody, oauthDraft } from '../shared/oauth-fields.js';
import { useSaveA2aAgent } from './queries.js';

const PLACED = ['name', 'card_url', 'headers', 'oauth', 'per_user_tokens'];

// No client registration for a remote agent: its card names the authorization server and the client is given here.
const OAUTH_HINTS = {
  clientId: "The client registered with the authorization server the agent's card names",
  scopes: 'Separated by spaces or commas; empty: the scopes the card lists',
};

/**
 * Create or edit a remote A2A agent: where its card is, the headers it needs
 * (stored encrypted), and its OAuth client settings when its card asks for
 * OAuth 2.
 */
export function A2aForm({ projectId, item: agent, onDone }: ItemFormProps<A2aAgent>) {
  const save = useSaveA2aAgent(projectId, agent?.id);
  const f = useFields(
    () => ({
      name: agent?.name ?? '',
      card_url: agent?.card_url ?? '',
      headers: toPairs(agent?.headers),
      ...oauthDraft(agent),
    }),
    save.error,
  );
  const oauth = oauthBody(f.values);
  // Sent only when changed: an edit of anything else leaves the agent's OAuth settings as they are.
  const oauthChanged = JSON.stringify(oauth) !== JSON.stringify(oauthBody(oauthDraft(agent)));
  const submit = () =>
    save.mutate(
      {
        name: f.values.name.trim(),
        card_url: f.values.card_url.trim(),
        headers: fromPairs(f.values.headers),
        ...(!agent || oauthChanged ? { oauth } : {}),
        per_user_tokens: f.values.per_user_tokens,
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
      <OAuthFields values={f.values} set={f.set} error={save.error} hints={OAUTH_HINTS} />
    </ResourceForm>
  );
}
