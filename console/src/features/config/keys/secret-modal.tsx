import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core';

/**
 * The secret, shown exactly once (after create or rotate): the API stores
 * only its hash, and the console keeps it only while this dialog is open.
 */
export function SecretModal({
  secret,
  name,
  onClose,
}: {
  secret: string | null;
  name: string;
  onClose: () => void;
}) {
  return (
    <Modal
      opened={secret !== null}
      onClose={onClose}
      title={`Secret of ${name}`}
      size="lg"
      closeOnClickOutside={false}
    >
      <Stack>
        <Alert color="yellow" title="Copy it now">
          This is the only time the secret is shown. The server keeps only a hash; if you lose it, rotate the
          key.
        </Alert>
        <Group wrap="nowrap" align="center">
          <Code block style={{ flex: 1, wordBreak: 'break-all' }} data-testid="virtual-key-secret">
            {secret}
          </Code>
          <CopyButton value={secret ?? ''}>
            {({ copied, copy }) => (
              <Button color={copied ? 'teal' : undefined} onClick={copy} variant="light">
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Text size="sm" c="dimmed">
          Use it where the vendor SDK takes its API key, with the gateway as base URL (for OpenAI:{' '}
          <Code>{`${location.origin}/api/gateway/openai/v1`}</Code>).
        </Text>
        <Group justify="flex-end">
          <Button onClick={onClose}>I have copied it</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
