import type { Knex } from 'knex';
import type { Equality } from './filter.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** How one filtered attribute reads in SQL: a column compared exactly, or case-insensitively. */
export interface FilterColumn {
  column: string;
  caseInsensitive?: boolean;
  boolean?: boolean;
  uuid?: boolean;
}

/**
 * Narrows `query` by `filter`'s comparisons. A value of the wrong kind (a
 * string for a boolean, a non-UUID id) matches nothing rather than failing.
 */
export function applyFilter(
  query: Knex.QueryBuilder,
  filter: Equality[],
  columns: Record<string, FilterColumn>,
  special: Record<string, (q: Knex.QueryBuilder, value: Equality['value']) => void> = {},
): void {
  for (const { attribute, value } of filter) {
    if (special[attribute]) {
      special[attribute](query, value);
      continue;
    }
    const c = columns[attribute]!;
    const fits = c.boolean ? typeof value === 'boolean' : c.uuid ? isUuid(value) : typeof value === 'string';
    if (value === null) void query.whereNull(c.column);
    else if (!fits) void query.whereRaw('false');
    else if (c.caseInsensitive) void query.whereRaw('lower(??) = lower(?)', [c.column, value]);
    else void query.where(c.column, value);
  }
}
