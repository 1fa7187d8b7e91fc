import { Button, Group } from '@mantine/core';
import type { ReactNode } from 'react';
import { DeleteButton } from './delete-button.js';

/**
 * A list row's actions: its own extras first, then Edit, then Delete (with
 * confirmation) or `remove`; without `onEdit` (the role may not change it), no Edit.
 */
export function RowActions({
  name,
  onEdit,
  onDelete,
  remove,
  children,
}: {
  name: string;
  onEdit?: () => void;
  onDelete?: () => Promise<unknown>;
  /** What stands in place of Delete. */
  remove?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <Group gap={4} justify="flex-end" wrap="nowrap">
      {children}
      {onEdit && (
        <Button size="compact-sm" variant="subtle" onClick={onEdit} aria-label={`Edit ${name}`}>
          Edit
        </Button>
      )}
      {remove ?? (onDelete && <DeleteButton what={name} onDelete={onDelete} />)}
    </Group>
  );
}
