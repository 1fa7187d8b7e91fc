import { api } from '../../../api/client.js';
import type { Model, ModelBody } from '../../../api/types.js';
import { projectResource } from '../shared/queries.js';

const models = projectResource<Model, ModelBody>('models', {
  list: (project_id) =>
    api.GET('/api/agent-server/models', { params: { query: { project_id, limit: 200 } } }),
  create: (project_id, body) =>
    api.POST('/api/agent-server/models', { params: { query: { project_id } }, body }),
  update: (id, body) => api.PATCH('/api/agent-server/models/{id}', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/agent-server/models/{id}', { params: { path: { id } } }),
});

export const useModels = models.useList;
export const useSaveModel = models.useSave;
export const useDeleteModel = models.useDelete;
