import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import type { DbProject, StoreEmbeddingColumns } from '../../core/db/tables/index.js';
import { canEmbed } from '../../core/memory/embedder.js';
import type { ProjectsRepository } from '../../core/repositories/projects.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  Project,
  ProjectCreateBody,
  ProjectUpdateBody,
  StoreEmbeddingSetting,
} from '../schemas/projects.schemas.js';

function toProject(row: DbProject): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    virtual_key_id: row.virtual_key_id,
    record_content: row.record_content,
    store_embedding: row.store_embedding_model_id
      ? {
          model_id: row.store_embedding_model_id,
          dims: row.store_embedding_dims,
          fields: row.store_embedding_fields,
        }
      : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The setting as its columns: absent leaves them, null clears them. */
function storeEmbeddingColumns(
  setting: StoreEmbeddingSetting | null | undefined,
): Partial<Pick<DbProject, StoreEmbeddingColumns>> {
  if (setting === undefined) return {};
  return {
    store_embedding_model_id: setting?.model_id ?? null,
    store_embedding_dims: setting?.dims ?? null,
    store_embedding_fields: setting?.fields ?? null,
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

  /**
   * The store's embedding model must be a model of this project (a new
   * project has none yet) whose provider type has embeddings: a 400 naming
   * `store_embedding.model_id` otherwise.
   */
  private async checkStoreEmbedding(
    projectId: string | undefined,
    setting: StoreEmbeddingSetting | null | undefined,
  ): Promise<void> {
    if (!setting) return;
    const model = await this.projects.modelForStore(setting.model_id);
    const field = 'store_embedding.model_id';
    if (!model || model.project_id !== projectId)
      throw ValidationError.field(
        field,
        'store_embedding.model_id does not name a model of this project',
        'any.reference',
      );
    if (!canEmbed(model.provider_type))
      throw ValidationError.field(
        field,
        `store_embedding.model_id names a ${model.provider_type} model: that provider type has no embeddings`,
        'any.invalid',
      );
  }

  async create(body: ProjectCreateBody): Promise<Project> {
    await this.checkVirtualKey(body.virtual_key_id);
    await this.checkStoreEmbedding(undefined, body.store_embedding);
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

  /** `only`: the projects a member holds a role in; undefined: every project. */
  async list(page: Page, only?: string[]): Promise<Project[]> {
    return (await this.projects.list(page, only)).map(toProject);
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
    if (body.store_embedding && !(await this.projects.findById(id))) throw new NotFoundError('project');
    await this.checkStoreEmbedding(id, body.store_embedding);
    try {
      const { store_embedding: setting, ...rest } = body;
      const row = await this.projects.update(id, { ...rest, ...storeEmbeddingColumns(setting) });
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
