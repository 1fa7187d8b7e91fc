import { ConflictError, NotFoundError } from '../errors.js';
import type { DbProject } from '../db/tables.js';
import type { ProjectsRepository } from '../repositories/projects.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { Project, ProjectCreateBody, ProjectUpdateBody } from '../schemas/projects.schemas.js';

function toProject(row: DbProject): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export class ProjectsService {
  constructor(private readonly projects: ProjectsRepository) {}

  async create(body: ProjectCreateBody): Promise<Project> {
    try {
      return toProject(
        await this.projects.insert({ name: body.name, description: body.description ?? null }),
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

  async delete(id: string): Promise<void> {
    if (!(await this.projects.delete(id))) throw new NotFoundError('project');
  }
}
