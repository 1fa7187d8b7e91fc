import { ConflictError, NotFoundError, isUniqueViolation } from '../../core/errors.js';
import type { DbSchema } from '../../core/db/tables/index.js';
import type { SchemasRepository } from '../../core/repositories/schemas.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { Schema, SchemaCreateBody, SchemaUpdateBody } from '../schemas/schemas.schemas.js';
import { compileJsonSchema } from './json-schema.js';
import { assertInProject, requireProject } from './project-scope.js';

function toSchema(row: DbSchema): Schema {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    schema: row.schema,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'a schema with this name already exists in the project' });
const stillReferenced = (agents: Array<{ id: string; name: string }>) =>
  new ConflictError({
    reason: 'still referenced',
    referenced_by: agents.map((a) => ({ type: 'agent', id: a.id, name: a.name })),
  });

/** JSON Schemas agents use for structured output; each must compile before it is stored. */
export class SchemasService {
  constructor(private readonly schemas: SchemasRepository) {}

  async create(projectId: string, body: SchemaCreateBody): Promise<Schema> {
    await requireProject(this.schemas.db, projectId);
    compileJsonSchema(body.schema);
    try {
      return toSchema(
        await this.schemas.insert({
          project_id: projectId,
          name: body.name,
          description: body.description ?? null,
          schema: body.schema,
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<Schema[]> {
    await requireProject(this.schemas.db, projectId);
    return (await this.schemas.list(projectId, page)).map(toSchema);
  }

  async get(id: string, projectId: string | undefined): Promise<Schema> {
    const row = await this.schemas.findById(id);
    assertInProject(row, projectId, 'schema');
    return toSchema(row!);
  }

  async update(id: string, projectId: string | undefined, body: SchemaUpdateBody): Promise<Schema> {
    assertInProject(await this.schemas.findById(id), projectId, 'schema');
    if (body.schema !== undefined) compileJsonSchema(body.schema);
    try {
      const row = await this.schemas.update(id, body);
      if (!row) throw new NotFoundError('schema');
      return toSchema(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  /** Refused (409, naming the agents) while an agent uses the schema. */
  async delete(id: string, projectId: string | undefined): Promise<void> {
    try {
      await this.schemas.transaction(async (trx) => {
        // Locking the row makes a concurrent agent insert wait, so the check cannot go stale before the delete.
        assertInProject(await this.schemas.lock(trx, id), projectId, 'schema');
        const agents = await this.schemas.referencingAgents(trx, id);
        if (agents.length > 0) throw stillReferenced(agents);
        await this.schemas.delete(trx, id);
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23503')
        throw stillReferenced(await this.schemas.referencingAgents(this.schemas.db, id));
      throw err;
    }
  }
}
