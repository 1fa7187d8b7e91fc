import { Button, type ModalProps } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { useCan } from '../../../app/auth.js';
import type { Need } from '../../../lib/permissions.js';
import { Empty } from '../../../components/empty.js';
import { ResourceTable, type Column, type ListQuery } from '../../../components/resource-table.js';
import { EditModal } from './edit-modal.js';
import { PageHeader } from './page-header.js';
import { RowActions } from './row-actions.js';

/**
 * A configuration tab: its title and "New …" button, the list as a table
 * (the name first, each row's actions last: its own, then Edit and Delete),
 * and the create/edit dialog around the resource's form; `?edit=<id>` in
 * the address opens that item's. What the user's role may not change
 * (`need`) shows without New, Edit and Delete.
 */
export function ResourcePage<T extends { id: string; name: string }>({
  title,
  what,
  plural = `${what}s`,
  intro,
  query,
  empty,
  name = (row) => row.name,
  columns,
  remove,
  rowExtras,
  rowRemove,
  modalSize = 'lg',
  form,
  children,
  need,
  canCreate,
  canChange,
}: {
  title: string;
  /** The resource in the singular: "New model", "Edit model …". */
  what: string;
  plural?: string;
  intro: ReactNode;
  query: ListQuery<T>;
  empty: { title: string; body: ReactNode };
  /** The Name column's cell (the name itself unless given). */
  name?: (row: T) => ReactNode;
  /** The columns after Name. */
  columns: Column<T>[];
  /** Deletes a row by its id (the resource's delete mutation). */
  remove?: { mutateAsync: (id: string) => Promise<unknown> };
  /** Actions of a row before Edit. */
  rowExtras?: (row: T) => ReactNode;
  /** In place of Delete (e.g. Rotate and Revoke). */
  rowRemove?: (row: T) => ReactNode;
  modalSize?: ModalProps['size'];
  /** The form for a new item (`item` undefined) or an existing one; `close` ends the dialog. */
  form: (item: T | undefined, close: () => void) => ReactNode;
  /** Anything else the tab shows (dialogs of its own). */
  children?: ReactNode;
  /** What creating, editing and deleting need in the current project. */
  need: Need;
  /** Whether New shows, when creating needs something else than `need`. */
  canCreate?: boolean;
  /** Whether a row's Edit and Delete show, when a row needs something else than `need`. */
  canChange?: (row: T) => boolean;
}) {
  const can = useCan();
  const creates = canCreate ?? can(need);
  const changes = (row: T) => (canChange ? canChange(row) : can(need));
  const [editing, setEditing] = useState<T | 'new' | null>(null);
  // `?edit=<id>` opens that item's form: other pages link to it (the waiting
  // runs inbox, to raise the budget that holds a run).
  const [params, setParams] = useSearchParams();
  const linkedId = params.get('edit');
  const linked = linkedId ? query.data?.find((row) => row.id === linkedId) : undefined;
  const close = () => {
    setEditing(null);
    if (linkedId)
      setParams(
        (p) => {
          p.delete('edit');
          return p;
        },
        { replace: true },
      );
  };
  const actions: Column<T> = {
    cell: (row) => (
      <RowActions
        name={row.name}
        onEdit={changes(row) ? () => setEditing(row) : undefined}
        onDelete={changes(row) && remove ? () => remove.mutateAsync(row.id) : undefined}
        remove={changes(row) ? rowRemove?.(row) : undefined}
      >
        {rowExtras?.(row)}
      </RowActions>
    ),
  };
  return (
    <>
      <PageHeader
        title={title}
        action={creates && <Button onClick={() => setEditing('new')}>{`New ${what}`}</Button>}
      >
        {intro}
      </PageHeader>
      <ResourceTable
        query={query}
        loading={`Loading ${plural}`}
        empty={<Empty title={empty.title}>{empty.body}</Empty>}
        columns={[{ header: 'Name', cell: name }, ...columns, actions]}
      />
      <EditModal
        editing={editing ?? (linked && changes(linked) ? linked : null)}
        what={what}
        onClose={close}
        size={modalSize}
      >
        {(item) => form(item, close)}
      </EditModal>
      {children}
    </>
  );
}
