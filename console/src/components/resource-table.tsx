import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { ErrorAlert } from './error-alert.js';
import { Loading } from './loading.js';

/** One column of a list: its header and what each row shows in it. */
export interface Column<T> {
  header?: ReactNode;
  cell: (row: T) => ReactNode;
}

/** A list query as the table reads it (TanStack Query's result fits). */
export interface ListQuery<T> {
  isLoading: boolean;
  error: unknown;
  data: T[] | undefined;
}

/**
 * A list answered by the API: loading (with its timeout message), the API's
 * error, the empty state (which says what to do next), or one row per item.
 */
export function ResourceTable<T extends { id: string }>({
  query,
  loading,
  empty,
  columns,
  label,
}: {
  query: ListQuery<T>;
  /** What is loading, e.g. "Loading models". */
  loading: string;
  empty: ReactNode;
  columns: Column<T>[];
  /** The table's accessible name. */
  label?: string;
}) {
  return (
    <>
      {query.isLoading && <Loading what={loading} />}
      <ErrorAlert error={query.error} />
      {query.data?.length === 0 && empty}
      {!!query.data?.length && (
        <Table striped highlightOnHover aria-label={label}>
          <Table.Thead>
            <Table.Tr>
              {columns.map((c, i) => (
                <Table.Th key={i}>{c.header}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {query.data.map((row) => (
              <Table.Tr key={row.id}>
                {columns.map((c, i) => (
                  <Table.Td key={i}>{c.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </>
  );
}
