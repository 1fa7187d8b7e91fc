import { Button, Group, Paper, SimpleGrid, Stack, Text, TextInput, Textarea } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client.js';
import { ErrorAlert } from '../../components/error-alert.js';

/**
 * The message box, with one input per template variable of the agent's
 * prompt (sent as `context`, which the conversation keeps for later turns).
 * Enter sends, Shift+Enter starts a new line.
 */
export function Composer({
  variables,
  kept,
  busy,
  blockedBy,
  error,
  onSend,
}: {
  variables: string[];
  /** The values the conversation already keeps. */
  kept: Record<string, unknown>;
  busy: boolean;
  /** Why nothing can be sent now (no agent, a turn still going), or undefined. */
  blockedBy: string | undefined;
  error: unknown;
  onSend: (text: string, context: Record<string, string>) => Promise<unknown>;
}) {
  const [text, setText] = useState('');
  const [vars, setVars] = useState<Record<string, string>>({});
  const fieldError = error instanceof ApiError ? error.fieldMessage('message') : undefined;
  const contextError =
    error instanceof ApiError ? error.fields.find((f) => f.field.startsWith('context'))?.message : undefined;
  const otherError = fieldError || contextError ? undefined : error;

  const send = () => {
    if (!text.trim() || busy || blockedBy) return;
    const context = Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== ''));
    onSend(text, context).then(
      () => setText(''),
      () => {}, // shown from the mutation's error
    );
  };

  return (
    <Paper withBorder p="sm" radius="md">
      <Stack gap="xs">
        {variables.length > 0 && (
          <>
            <Text size="xs" c="dimmed">
              Template variables (kept by the conversation for later turns)
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="xs">
              {variables.map((v) => (
                <TextInput
                  key={v}
                  size="xs"
                  label={v}
                  placeholder={v in kept ? `kept: ${String(kept[v])}` : 'not set'}
                  value={vars[v] ?? ''}
                  onChange={(e) => {
                    const value = e.currentTarget.value;
                    setVars((p) => ({ ...p, [v]: value }));
                  }}
                />
              ))}
            </SimpleGrid>
            {contextError && (
              <Text size="xs" c="red">
                {contextError}
              </Text>
            )}
          </>
        )}
        <Textarea
          label="Message"
          placeholder={blockedBy ?? 'Ask the agent something (Enter sends, Shift+Enter for a new line)'}
          autosize
          minRows={2}
          maxRows={10}
          value={text}
          error={fieldError}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
        <ErrorAlert error={otherError} />
        <Group justify="space-between">
          <Text size="xs" c="dimmed">
            {blockedBy ?? ''}
          </Text>
          <Button onClick={send} loading={busy} disabled={!text.trim() || Boolean(blockedBy)}>
            Send
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
