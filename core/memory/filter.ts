import type { FieldCondition } from '../repositories/memory-store.repository.js';

const COMPARISONS = new Set(['$gt', '$gte', '$lt', '$lte']);
const OPERATORS = new Set(['$eq', '$ne', '$in', '$nin', ...COMPARISONS]);

/** A bad `filter` entry: the field and why. */
export interface FilterProblem {
  field: string;
  message: string;
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.keys(v).length > 0 &&
  Object.keys(v).every((k) => k.startsWith('$'));

/**
 * The Agent Protocol's search `filter` as conditions on the value's
 * top-level fields: a plain value matches by equality (as JSON: `{"a": 1}`
 * matches an object field exactly), an object of operators (`$eq`, `$ne`,
 * `$gt`, `$gte`, `$lt`, `$lte` on numbers or strings, `$in`, `$nin` with a
 * list) must meet each of them.
 */
export function parseFilter(
  filter: Record<string, unknown> | undefined,
): Array<{ field: string; condition: FieldCondition }> | FilterProblem {
  const out: Array<{ field: string; condition: FieldCondition }> = [];
  for (const [field, wanted] of Object.entries(filter ?? {})) {
    if (!isOperatorObject(wanted)) {
      out.push({ field, condition: { op: '$eq', value: wanted } });
      continue;
    }
    for (const [op, value] of Object.entries(wanted)) {
      if (!OPERATORS.has(op)) return { field, message: `unknown filter operator "${op}"` };
      if (COMPARISONS.has(op) && typeof value !== 'number' && typeof value !== 'string')
        return { field, message: `"${op}" compares with a number or a string` };
      if ((op === '$in' || op === '$nin') && !Array.isArray(value))
        return { field, message: `"${op}" takes a list` };
      out.push({ field, condition: { op, value } as FieldCondition });
    }
  }
  return out;
}
