import { Alert, Button, Code, FileInput, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import { fieldErrorUnder, unplacedError } from '../../../components/field-errors.js';
import { useDeleteSkill, useSkills, useUploadSkill } from './queries.js';

export interface PendingSkill {
  name: string;
  zip: File;
}

/** A skill name from a zip's file name: `pdf-tools.zip` → `pdf-tools`. */
const nameOf = (file: File) =>
  file.name
    .replace(/\.zip$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);

/** Pick a zip and name it (the name must match SKILL.md's front matter). */
function SkillPicker({
  onAdd,
  busy,
  error,
  action,
}: {
  onAdd: (s: PendingSkill) => void;
  busy?: boolean;
  error?: unknown;
  action: string;
}) {
  const [zip, setZip] = useState<File | null>(null);
  const [name, setName] = useState('');
  return (
    <Group align="flex-start">
      <FileInput
        label="Skill zip"
        description="A folder with SKILL.md, zipped (2 MiB at most)"
        accept=".zip,application/zip"
        placeholder="Choose a .zip"
        value={zip}
        onChange={(f) => {
          setZip(f);
          if (f) setName(nameOf(f));
        }}
        error={fieldErrorUnder(error, 'files')}
        style={{ flex: 1 }}
        clearable
      />
      <TextInput
        label="Skill name"
        description="As in SKILL.md's front matter"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={fieldErrorUnder(error, 'name')}
        style={{ flex: 1 }}
      />
      <Button
        mt={44}
        variant="light"
        loading={busy}
        disabled={!zip || !name.trim()}
        onClick={() => {
          if (!zip) return;
          onAdd({ name: name.trim(), zip });
          setZip(null);
          setName('');
        }}
      >
        {action}
      </Button>
    </Group>
  );
}

/** Skills of an existing agent: listed, uploaded (PUT replaces a folder), deleted. */
function AgentSkills({ agentId }: { agentId: string }) {
  const list = useSkills(agentId);
  const upload = useUploadSkill(agentId);
  const del = useDeleteSkill(agentId);
  const skills = list.data ?? [];
  const warnings = [...new Set(skills.flatMap((s) => s.warnings ?? []))];
  return (
    <Stack>
      {warnings.map((w) => (
        <Alert key={w} color="yellow">
          {w}
        </Alert>
      ))}
      {skills.length === 0 ? (
        <Text size="sm" c="dimmed">
          No skill yet: upload a zipped folder with a SKILL.md.
        </Text>
      ) : (
        <Table>
          <Table.Tbody>
            {skills.map((s) => (
              <Table.Tr key={s.name}>
                <Table.Td>
                  <Code>{s.name}</Code>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{s.description}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="xs" c="dimmed">
                    {s.file_count} files · {s.total_bytes} bytes
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    color="red"
                    aria-label={`Delete skill ${s.name}`}
                    onClick={() => del.mutate(s.name)}
                  >
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <SkillPicker
        action="Upload"
        busy={upload.isPending}
        error={upload.error}
        onAdd={(s) => upload.mutate(s)}
      />
      <ErrorAlert error={unplacedError(upload.error, ['name', 'files']) ?? del.error} />
    </Stack>
  );
}

/** Skills: uploaded now for an existing agent, or queued and uploaded right after the agent is created. */
export function SkillsSection({
  agentId,
  pending,
  setPending,
}: {
  agentId?: string;
  pending: PendingSkill[];
  setPending: (p: PendingSkill[]) => void;
}) {
  if (agentId) return <AgentSkills agentId={agentId} />;
  return (
    <Stack>
      <Text size="sm" c="dimmed">
        Skills are uploaded once the agent is created. The agent reads them through its sandbox.
      </Text>
      {pending.map((p, i) => (
        <Group key={`${p.name}-${i}`} justify="space-between">
          <Text size="sm">
            <Code>{p.name}</Code> {p.zip.name}
          </Text>
          <Button
            size="compact-sm"
            variant="subtle"
            color="red"
            onClick={() => setPending(pending.filter((_, j) => j !== i))}
          >
            Remove
          </Button>
        </Group>
      ))}
      <SkillPicker action="Add" onAdd={(s) => setPending([...pending, s])} />
    </Stack>
  );
}
