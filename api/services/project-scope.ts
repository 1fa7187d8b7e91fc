import type { Db } from '../../core/db/knex.js';
import { NotFoundError } from '../../core/errors.js';
import { ProjectsRepository } from '../../core/repositories/projects.repository.js';

/**
 * Project scoping rules (docs/api.md#projects): project-scoped resources take
 * `?project_id=` on create and list, and an unknown project there is a 404.
 * Get/update/delete by UUID need no project, but one given must match.
 */
export async function requireProject(db: Db, projectId: string): Promise<void> {
  if (!(await new ProjectsRepository(db).exists(projectId))) throw new NotFoundError('project');
}

/** A resource fetched by id whose project differs from the `project_id` the caller gave does not exist for them. */
export function assertInProject(
  row: { project_id: string } | undefined,
  projectId: string | undefined,
  what: string,
): void {
  if (!row || (projectId !== undefined && row.project_id !== projectId)) throw new NotFoundError(what);
}

export type { Referrer } from '../../core/repositories/types.js';
