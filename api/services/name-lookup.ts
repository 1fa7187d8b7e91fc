import { NotFoundError, ValidationError } from '../../core/errors.js';

/**
 * Lookups by name or by a client-chosen string id (docs/api.md#projects): with
 * `project_id` they look in that project; without it they resolve when exactly
 * one project has a match, and are ambiguous (400 naming `project_id`) when
 * several do. Repositories fetch at most two candidates, which is enough to tell.
 */
export function pickUnique<T extends { project_id: string }>(candidates: T[], what: string): T {
  if (candidates.length === 0) throw new NotFoundError(what);
  if (candidates.length > 1) {
    throw ValidationError.field(
      'project_id',
      `several projects have a ${what} with this name; pass project_id to choose one`,
      'any.ambiguous',
    );
  }
  return candidates[0]!;
}
