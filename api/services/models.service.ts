import type { DbModel, DbModelWrite, ProviderType } from '../../core/db/tables/index.js';
import type { Db } from '../../core/db/knex.js';
import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import type { ModelsRepository } from '../../core/repositories/models.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { Model, ModelCreateBody, ModelUpdateBody } from '../schemas/models.schemas.js';
import { assertInProject, requireProject } from './project-scope.js';

function toModel(row: DbModel): Model {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    model_id: row.model_id,
    provider_type: row.provider_type,
    provider_id: row.provider_id,
    parameters: row.parameters,
    pricing: row.pricing,
    max_output_tokens: row.max_output_tokens,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'a model with this name already exists in this project' });

/** How many candidate providers an ambiguity message names; more only makes it unreadable. */
const CANDIDATES_NAMED = 10;

/**
 * Models are per project. A model pinned to a provider must match its type.
 * Without `provider_id` the only provider of the type serves it at call time,
 * so a model saved while there is none or one is kept (clients may send a model
 * without a provider: docs/interface.md#models); while several exist nothing
 * could choose among them and its first call would fail, so it is refused on
 * save, naming the candidates. A provider added later can still make a saved
 * model ambiguous: its next save asks for one.
 */
export class ModelsService {
  constructor(
    private readonly models: ModelsRepository,
    private readonly db: Db,
  ) {}

  private async checkProvider(providerId: string, providerType: ProviderType): Promise<void> {
    const provider = await this.models.findProvider(providerId);
    if (!provider) {
      throw ValidationError.field(
        'provider_id',
        'provider_id does not name an existing provider',
        'any.reference',
      );
    }
    if (provider.provider_type !== providerType) {
      throw ValidationError.field(
        'provider_id',
        `provider_id names a provider of type ${provider.provider_type}, but the model's provider_type is ${providerType}`,
        'any.mismatch',
      );
    }
  }

  /** A model that names no provider is refused while several providers of its type exist. */
  private async checkUnambiguous(providerType: ProviderType): Promise<void> {
    const { total, first } = await this.models.providersOfType(providerType, CANDIDATES_NAMED);
    if (total < 2) return;
    const named = first.map((p) => `${p.name} (${p.id})`).join(', ');
    const more = total > first.length ? ` and ${total - first.length} more` : '';
    throw ValidationError.field(
      'provider_id',
      `provider_id is required: ${total} providers of type ${providerType} could serve this model, ` +
        `choose one of ${named}${more}`,
      'any.ambiguous',
    );
  }

  private async checkProviderChoice(
    providerId: string | null | undefined,
    providerType: ProviderType,
  ): Promise<void> {
    if (providerId) await this.checkProvider(providerId, providerType);
    else await this.checkUnambiguous(providerType);
  }

  async create(projectId: string, body: ModelCreateBody): Promise<Model> {
    await requireProject(this.db, projectId);
    await this.checkProviderChoice(body.provider_id, body.provider_type);
    try {
      return toModel(
        await this.models.insert({
          project_id: projectId,
          name: body.name,
          model_id: body.model_id,
          provider_type: body.provider_type,
          provider_id: body.provider_id ?? null,
          parameters: JSON.stringify(body.parameters ?? {}),
          pricing: body.pricing ? JSON.stringify(body.pricing) : null,
          max_output_tokens: body.max_output_tokens ?? null,
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<Model[]> {
    await requireProject(this.db, projectId);
    return (await this.models.list(projectId, page)).map(toModel);
  }

  private async find(id: string, projectId: string | undefined): Promise<DbModel> {
    const row = await this.models.findById(id);
    assertInProject(row, projectId, 'model');
    return row!;
  }

  async get(id: string, projectId?: string): Promise<Model> {
    return toModel(await this.find(id, projectId));
  }

  /** `parameters` and `pricing` are replaced whole (`null` clears pricing). */
  async update(id: string, projectId: string | undefined, body: ModelUpdateBody): Promise<Model> {
    const current = await this.find(id, projectId);
    const providerType = body.provider_type ?? current.provider_type;
    const providerId = body.provider_id === undefined ? current.provider_id : body.provider_id;
    if (body.provider_type !== undefined || body.provider_id !== undefined || !providerId) {
      await this.checkProviderChoice(providerId, providerType);
    }
    const patch: Partial<DbModelWrite> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.model_id !== undefined) patch.model_id = body.model_id;
    if (body.provider_type !== undefined) patch.provider_type = body.provider_type;
    if (body.provider_id !== undefined) patch.provider_id = body.provider_id;
    if (body.parameters !== undefined) patch.parameters = JSON.stringify(body.parameters);
    if (body.pricing !== undefined)
      patch.pricing = body.pricing === null ? null : JSON.stringify(body.pricing);
    if (body.max_output_tokens !== undefined) patch.max_output_tokens = body.max_output_tokens;
    try {
      const row = await this.models.update(id, patch);
      if (!row) throw new NotFoundError('model');
      return toModel(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  /** Never cascades: a model an agent uses is a 409 naming the agents. */
  async delete(id: string, projectId?: string): Promise<void> {
    await this.find(id, projectId);
    const referencedBy = await this.models.referrers(id);
    if (referencedBy.length > 0)
      throw new ConflictError({ reason: 'still referenced', referenced_by: referencedBy });
    if (!(await this.models.delete(id))) throw new NotFoundError('model');
  }
}
