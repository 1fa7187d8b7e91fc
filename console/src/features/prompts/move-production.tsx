import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import type { Prompt } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { useReturnFocus } from '../../components/return-focus.js';
import { useMoveLabel } from './queries.js';

/**
 * Moving `production` changes what every agent on that label runs from its
 * next turn, so it waits for a confirmation naming both versions; Cancel
 * leaves the label where it is. Mounted only while asked: each question
 * starts afresh (no error of the last one), and focus goes back to the button
 * that asked when it closes.
 */
export function MoveProductionDialog({
  projectId,
  prompt,
  version,
  onClose,
  onMoved,
}: {
  projectId: string;
  prompt: Prompt;
  /** The version production would move to. */
  version: number;
  onClose: () => void;
  onMoved?: () => void;
}) {
  useReturnFocus();
  const move = useMoveLabel(projectId, prompt.name);
  const from = prompt.labels.production;
  const confirm = () =>
    move.mutate(
      { version, label: 'production' },
      {
        onSuccess: () => {
          onMoved?.();
          onClose();
        },
      },
    );
  return (
    <Modal opened onClose={onClose} title={`Move production of ${prompt.name}?`}>
      <Stack>
        <Text>
          {from ? (
            <>
              production moves from <b>v{from}</b> to <b>v{version}</b>.
            </>
          ) : (
            <>
              production is on no version yet: it goes to <b>v{version}</b>.
            </>
          )}
        </Text>
        <Text size="sm" c="dimmed">
          Agents that use the production label run v{version} from their next turn. The move is kept in the
          label history.
        </Text>
        <ErrorAlert error={move.error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="green" loading={move.isPending} onClick={confirm} data-autofocus>
            Move to v{version}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
