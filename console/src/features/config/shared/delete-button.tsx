import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation } from '@tanstack/react-query';
import { ApiError } from '../../../api/client.js';
import { ErrorAlert } from '../../../components/error-alert.js';

/** Referrers a 409 names, as the API listed them. */
function referrers(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.status !== 409) return undefined;
  const by = error.details.referenced_by ?? error.details.referrers;
  return by === undefined ? undefined : JSON.stringify(by);
}

/** Delete (or revoke) after a confirmation; a 409 shows what still refers to it. */
export function DeleteButton({
  what,
  label = 'Delete',
  explain,
  onDelete,
}: {
  what: string;
  label?: string;
  explain?: string;
  onDelete: () => Promise<unknown>;
}) {
  const [opened, { open, close }] = useDisclosure();
  const del = useMutation({ mutationFn: onDelete, onSuccess: close });
  const refs = referrers(del.error);
  return (
    <>
      <Button size="compact-sm" variant="subtle" color="red" onClick={open} aria-label={`${label} ${what}`}>
        {label}
      </Button>
      <Modal
        opened={opened}
        onClose={() => {
          del.reset();
          close();
        }}
        title={`${label} ${what}?`}
      >
        <Stack>
          <Text size="sm">{explain ?? 'This cannot be undone.'}</Text>
          <ErrorAlert error={del.error} />
          {refs && (
            <Text size="sm" c="red">
              Still used by: <code>{refs}</code>
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={del.isPending} onClick={() => del.mutate()}>
              {label}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
