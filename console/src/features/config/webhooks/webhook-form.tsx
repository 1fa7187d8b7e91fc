import { MultiSelect, Switch, TextInput } from '@mantine/core';
import type { Webhook, WebhookBody, WebhookWithSecret } from '../../../api/types.js';
import { ResourceForm, useFields } from '../../../components/resource-form.js';
import { useSaveWebhook, WEBHOOK_EVENTS } from './queries.js';

const PLACED = ['url', 'events', 'enabled'];

/** Register or edit a webhook: where deliveries go and which events. */
export function WebhookForm({
  projectId,
  webhook,
  onDone,
  onCreated,
}: {
  projectId: string;
  webhook?: Webhook;
  onDone: () => void;
  onCreated: (w: WebhookWithSecret) => void;
}) {
  const save = useSaveWebhook(projectId, webhook?.id);
  const f = useFields(
    () => ({
      url: webhook?.url ?? '',
      events: webhook?.events ?? ['run.completed', 'run.failed'],
      enabled: webhook?.enabled ?? true,
    }),
    save.error,
  );
  const submit = () =>
    save.mutate(
      {
        url: f.values.url.trim(),
        events: f.values.events as WebhookBody['events'],
        enabled: f.values.enabled,
      },
      {
        onSuccess: (saved) => {
          if (!webhook) onCreated(saved as WebhookWithSecret);
          else onDone();
        },
      },
    );
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={webhook ? 'Save webhook' : 'Create webhook'}
      onCancel={onDone}
    >
      <TextInput
        label="URL"
        description="Receives a signed POST per event (Standard Webhooks)"
        placeholder="https://example.com/hooks/agent-server"
        required
        {...f.text('url')}
        data-autofocus
      />
      <MultiSelect label="Events" required data={[...WEBHOOK_EVENTS]} {...f.value('events')} />
      <Switch
        label="Enabled"
        checked={f.values.enabled}
        onChange={(e) => f.set({ enabled: e.currentTarget.checked })}
      />
    </ResourceForm>
  );
}
