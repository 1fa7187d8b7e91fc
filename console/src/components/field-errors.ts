import { ApiError } from '../api/client.js';

/**
 * The API's message for one field of a form: a validation error naming it
 * (`errorDetails.fields`), or a conflict naming it (`errorDetails.field` with
 * its `reason`, e.g. a name already taken).
 */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const own = error.fieldMessage(field);
  if (own) return own;
  if (error.details.field === field && typeof error.details.reason === 'string') return error.details.reason;
  return undefined;
}

/** Fields of the error the form shows next to an input; anything else goes in the alert above the buttons. */
export function unplacedError(error: unknown, placed: readonly string[]): unknown {
  if (!(error instanceof ApiError)) return error;
  const rest = error.fields.filter((f) => !placed.some((p) => f.field === p || f.field.startsWith(`${p}.`)));
  const conflictPlaced = typeof error.details.field === 'string' && placed.includes(error.details.field);
  if (error.fields.length > 0 && rest.length === 0) return null;
  if (error.fields.length === 0 && conflictPlaced) return null;
  return rest.length === error.fields.length
    ? error
    : new ApiError(error.status, error.message, rest, error.details);
}

/** A number input's value as the API wants it: a number, or null when left empty. */
export function numberOrNull(v: string | number): number | null {
  return typeof v === 'number' ? v : v.trim() === '' ? null : Number(v);
}

/** `undefined` for an empty string (an optional field left out), else the trimmed text. */
export function textOrUndefined(v: string): string | undefined {
  return v.trim() === '' ? undefined : v.trim();
}

/** The first API message for a field or anything under it (`headers` → `headers.X-Api-Key`). */
export function fieldErrorUnder(error: unknown, prefix: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const hit = error.fields.find((f) => f.field === prefix || f.field.startsWith(`${prefix}.`));
  return hit?.message ?? fieldError(error, prefix);
}
