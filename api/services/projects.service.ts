import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import type { DbProject } from '../../core/db/tables/index.js';
import type { ProjectsRepository } from '../../core/repositories/projects.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { Project, ProjectCreateBody, ProjectUpdateBody } from '../schemas/projects.schemas.js';

function toProject(row: DbProject): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    virtual_key_id: row.virtual_key_id,
    record_content: row.record_content,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export class ProjectsService {
  constructor(private readonly projects: ProjectsRepository) {}

  /** A dangling `virtual_key_id` is a 400 naming the field (docs/api.md#ids-in-requests); null clears it. */
  private async checkVirtualKey(id: string | null | undefined): Promise<void> {
    if (id && !(await this.projects.virtualKeyExists(id))) {
      throw ValidationError.field(
        'virtual_key_id',
        'virtual_key_id does not name an existing virtual key',
        'any.reference',
      );
    }
  }

  async create(body: ProjectCreateBody): Promise<Project> {
    await this.checkVirtualKey(body.virtual_key_id);
    try {
      return toProject(
        await this.projects.insert({
          name: body.name,
          description: body.description ?? null,
          virtual_key_id: body.virtual_key_id ?? null,
          record_content: body.record_content ?? false,
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({ field: 'name', reason: 'a project with this name already exists' });
      throw err;
    }
  }

  async list(page: Page): Promise<Project[]> {
    return (await this.projects.list(page)).map(toProject);
  }

  async get(id: string): Promise<Project> {
    const row = await this.projects.findById(id);
    if (!row) throw new NotFoundError('project');
    return toProject(row);
  }

  async update(id: string, body: ProjectUpdateBody): Promise<Project> {
    // An unknown project is a 404 even when the body also has a bad reference.
    if (body.virtual_key_id && !(await this.projects.findById(id))) throw new NotFoundError('project');
    await this.checkVirtualKey(body.virtual_key_id);
    try {
      const row = await this.projects.update(id, body);
      if (!row) throw new NotFoundError('project');
      return toProject(row);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({ field: 'name', reason: 'a project with this name already exists' });
      throw err;
    }
  }

  /**
   * A project that still holds resources is not deleted (they are never
   * cascaded away); the 409 names what is left so the caller can clean up.
   */
  async delete(id: string): Promise<void> {
    if (!(await this.projects.findById(id))) throw new NotFoundError('project');
    const left = await this.projects.contents(id);
    if (left.length > 0) throw new ConflictError({ reason: 'still referenced', referenced_by: left });
    if (!(await this.projects.delete(id))) throw new NotFoundError('project');
  }
}
