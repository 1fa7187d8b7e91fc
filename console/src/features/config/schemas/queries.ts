import { api } from '../../../api/client.js';
import type { JsonSchemaDoc, SchemaBody } from '../../../api/types.js';
import { projectResource } from '../shared/queries.js';

const schemas = projectResource<JsonSchemaDoc, SchemaBody>('schemas', {
  list: (project_id) =>
    api.GET('/api/agent-server/schemas', { params: { query: { project_id, limit: 200 } } }),
  create: (project_id, body) =>
    api.POST('/api/agent-server/schemas', { params: { query: { project_id } }, body }),
  update: (id, body) => api.PATCH('/api/agent-server/schemas/{id}', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/agent-server/schemas/{id}', { params: { path: { id } } }),
});

export const useSchemas = schemas.useList;
export const useSaveSchema = schemas.useSave;
export const useDeleteSchema = schemas.useDelete;
