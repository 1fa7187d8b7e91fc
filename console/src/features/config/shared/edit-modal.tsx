import { Modal, type ModalProps } from '@mantine/core';
import type { ReactNode } from 'react';
import { useReturnFocus } from '../../../components/return-focus.js';

/**
 * The create/edit dialog of a list: mounted only while open, so its title
 * never changes under a closing transition and a form always starts afresh.
 */
export function EditModal<T extends { name: string }>({
  editing,
  what,
  onClose,
  size = 'lg',
  children,
}: {
  editing: T | 'new' | null;
  what: string;
  onClose: () => void;
  size?: ModalProps['size'];
  children: (item: T | undefined) => ReactNode;
}) {
  if (editing === null) return null;
  return (
    <OpenModal
      onClose={onClose}
      size={size}
      title={editing === 'new' ? `New ${what}` : `Edit ${what} ${editing.name}`}
    >
      {children(editing === 'new' ? undefined : editing)}
    </OpenModal>
  );
}

/** The dialog while it is mounted; focus goes back to its opener when it closes. */
function OpenModal(props: Omit<ModalProps, 'opened'>) {
  useReturnFocus();
  return <Modal opened {...props} />;
}
