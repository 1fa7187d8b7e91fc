import {
  Accordion,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Code,
  Group,
  Modal,
  Stack,
  Tabs,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ErrorAlert } from '../../components/error-alert.js';
import { DeleteButton } from '../config/shared/delete-button.js';
import { Loading } from '../../components/loading.js';
import { DiffView } from './diff-view.js';
import { LabelsPanel } from './labels.js';
import type { Prompt, PromptVersion } from '../../api/types.js';
import { PromptVersionForm } from './new-prompt-form.js';
import { PlaygroundLink } from './playground-link.js';
import { LabelHistory } from './label-history.js';
import { MoveProductionDialog } from './move-production.js';
import { useDeletePrompt, usePrompt, useVersions } from './queries.js';
import { useCan } from '../../app/auth.js';

function LabelBadges({ v }: { v: PromptVersion }) {
  return (
    <>
      {v.labels.map((l) => (
        <Badge key={l} color={l === 'production' ? 'green' : 'blue'} size="sm">
          {l}
        </Badge>
      ))}
    </>
  );
}

function VersionList({
  projectId,
  prompt,
  versions,
  compare,
}: {
  projectId: string;
  prompt: Prompt;
  versions: PromptVersion[];
  compare: (from: number, to: number) => void;
}) {
  const [moving, setMoving] = useState<number | null>(null);
  const develops = useCan()('develop');
  return (
    <Stack>
      {/* Keyed by the newest version: a new version opens (and the rest close). */}
      <Accordion key={versions[0]?.version} variant="separated" defaultValue={String(versions[0]?.version)}>
        {versions.map((v) => (
          <Accordion.Item key={v.id} value={String(v.version)}>
            <Accordion.Control>
              <Group gap="xs">
                <Text fw={600}>v{v.version}</Text>
                <Text size="sm">{v.commit_message}</Text>
                <LabelBadges v={v} />
                <Text size="xs" c="dimmed">
                  {new Date(v.created_at).toLocaleString()}
                </Text>
              </Group>
            </Accordion.Control>
            <Accordion.Panel>
              <Stack gap="sm">
                <Code block>{v.template}</Code>
                <Text size="sm">
                  Variables: {v.variables.length ? v.variables.map((x) => <Code key={x}>{x}</Code>) : 'none'}
                </Text>
                <Group gap="xs">
                  <PlaygroundLink
                    projectId={projectId}
                    promptId={prompt.id}
                    promptName={prompt.name}
                    version={v.version}
                  />
                  {develops && !v.labels.includes('production') && (
                    <Button
                      size="compact-sm"
                      variant="light"
                      color="green"
                      onClick={() => setMoving(v.version)}
                    >
                      Make production
                    </Button>
                  )}
                  {v.version > 1 && (
                    <Button
                      size="compact-sm"
                      variant="subtle"
                      onClick={() => compare(v.version - 1, v.version)}
                    >
                      Compare with v{v.version - 1}
                    </Button>
                  )}
                </Group>
              </Stack>
            </Accordion.Panel>
          </Accordion.Item>
        ))}
      </Accordion>
      {moving !== null && (
        <MoveProductionDialog
          projectId={projectId}
          prompt={prompt}
          version={moving}
          onClose={() => setMoving(null)}
        />
      )}
    </Stack>
  );
}

/** One prompt: its labels, its versions, a side-by-side diff of any two, who moved its labels, and new versions. */
export function PromptDetail({ projectId, name }: { projectId: string; name: string }) {
  const prompt = usePrompt(projectId, name);
  const versions = useVersions(projectId, name);
  const del = useDeletePrompt(projectId);
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const [adding, setAdding] = useState(false);
  const develops = useCan()('develop');
  if (prompt.isLoading || versions.isLoading) return <Loading what="Loading the prompt" />;
  if (prompt.error || versions.error || !prompt.data || !versions.data)
    return (
      <ErrorAlert
        error={prompt.error ?? versions.error}
        missing={{ what: 'prompt', idField: 'name', back: { to: '/prompts', label: 'All prompts' } }}
      />
    );
  const p = prompt.data;
  const list = versions.data;
  const latest = list[0]?.version ?? 1;
  const to = Number(params.get('to') ?? latest);
  const from = Number(params.get('from') ?? Math.max(1, to - 1));
  const view = params.get('view') ?? 'versions';
  const setView = (next: Record<string, string>) =>
    setParams((old) => ({ ...Object.fromEntries(old), ...next }), { replace: true });
  return (
    <Stack>
      <Breadcrumbs>
        <Anchor component={Link} to="/prompts">
          Prompts
        </Anchor>
        <Text>{p.name}</Text>
      </Breadcrumbs>
      <Group justify="space-between">
        <Title order={3}>{p.name}</Title>
        {develops && (
          <Group gap="xs">
            <Button onClick={() => setAdding(true)}>New version</Button>
            <DeleteButton
              what={p.name}
              label="Delete prompt"
              explain="Every version goes with it. Refused while an agent uses the prompt."
              onDelete={() => del.mutateAsync(p.name).then(() => navigate('/prompts'))}
            />
          </Group>
        )}
      </Group>
      <LabelsPanel projectId={projectId} prompt={p} versions={list} />
      <Tabs value={view} onChange={(v) => v && setView({ view: v })}>
        <Tabs.List>
          <Tabs.Tab value="versions">Versions ({list.length})</Tabs.Tab>
          <Tabs.Tab value="diff" disabled={list.length < 2}>
            Diff
          </Tabs.Tab>
          <Tabs.Tab value="history">Label history</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="versions" pt="md">
          <VersionList
            projectId={projectId}
            prompt={p}
            versions={list}
            compare={(f, t) => setView({ view: 'diff', from: String(f), to: String(t) })}
          />
        </Tabs.Panel>
        <Tabs.Panel value="diff" pt="md">
          {view === 'diff' && (
            <DiffView
              versions={list}
              from={from}
              to={to}
              onChange={(f, t) => setView({ from: String(f), to: String(t) })}
            />
          )}
        </Tabs.Panel>
        <Tabs.Panel value="history" pt="md">
          {view === 'history' && <LabelHistory projectId={projectId} name={p.name} />}
        </Tabs.Panel>
      </Tabs>
      <Modal opened={adding} onClose={() => setAdding(false)} title={`New version of ${p.name}`} size="xl">
        {adding && (
          <PromptVersionForm
            projectId={projectId}
            prompt={p}
            base={list[0]}
            onDone={() => setAdding(false)}
          />
        )}
      </Modal>
    </Stack>
  );
}
