import { Badge, Code, Text } from '@mantine/core';
import { useState } from 'react';
import { SecretOnce } from '../../../components/secret-once.js';
import type { Webhook } from '../../../api/types.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { useDeleteWebhook, useWebhooks } from './queries.js';
import { WebhookForm } from './webhook-form.js';

/** The signing secret, shown exactly once after create. */
function WebhookSecret({ secret, onClose }: { secret: string | null; onClose: () => void }) {
  return (
    <SecretOnce
      secret={secret}
      title="Webhook secret"
      testId="webhook-secret"
      warning={
        <>
          Verify each delivery&apos;s <Code>webhook-signature</Code> with it (any Standard Webhooks library
          does).
        </>
      }
      onClose={onClose}
    />
  );
}

function Webhooks({ projectId }: { projectId: string }) {
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <ResourcePage<Webhook & { name: string }>
      need="develop"
      title="Webhooks"
      what="webhook"
      intro="Endpoints that receive this project's run events as signed POSTs, retried until they answer 2xx. The secret is shown once."
      query={useWebhooks(projectId)}
      empty={{
        title: 'No webhook in this project',
        body: 'Register an endpoint to be told when runs complete, fail, pause or are cancelled.',
      }}
      name={(w) => <Code>{w.url}</Code>}
      columns={[
        { header: 'Events', cell: (w) => <Text size="sm">{w.events.join(', ')}</Text> },
        {
          header: 'State',
          cell: (w) =>
            w.enabled ? (
              <Badge variant="light">enabled</Badge>
            ) : (
              <Badge variant="light" color="gray">
                disabled
              </Badge>
            ),
        },
      ]}
      remove={useDeleteWebhook(projectId)}
      form={(item, close) => (
        <WebhookForm
          projectId={projectId}
          webhook={item}
          onDone={close}
          onCreated={(w) => {
            close();
            setSecret(w.secret);
          }}
        />
      )}
    >
      <WebhookSecret secret={secret} onClose={() => setSecret(null)} />
    </ResourcePage>
  );
}

export function WebhooksPage() {
  return <NeedProject>{(p) => <Webhooks key={p.id} projectId={p.id} />}</NeedProject>;
}
