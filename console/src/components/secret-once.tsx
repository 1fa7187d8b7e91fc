import { Alert, Button, Code, CopyButton, Group, Modal, Stack } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A secret shown exactly once (a virtual key's, a webhook's): the API keeps
 * only a hash or the encrypted value, and the console keeps it only while
 * this dialog is open. `warning` says what losing it means; `children` how
 * to use it.
 */
export function SecretOnce({
  secret,
  title,
  testId,
  warning,
  onClose,
  children,
}: {
  secret: string | null;
  title: string;
  testId: string;
  warning: ReactNode;
  onClose: () => void;
  children?: ReactNode;
}) {
  return (
    <Modal opened={secret !== null} onClose={onClose} title={title} size="lg" closeOnClickOutside={false}>
      <Stack>
        <Alert color="yellow" title="Copy it now">
          This is the only time the secret is shown. {warning}
        </Alert>
        <Group wrap="nowrap" align="center">
          <Code block style={{ flex: 1, wordBreak: 'break-all' }} data-testid={testId}>
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
        {children}
        <Group justify="flex-end">
          <Button onClick={onClose}>I have copied it</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
