import { randomUUID } from 'node:crypto';
import type { TestApi } from './api.js';

export interface ProjectData {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export const uniqueName = (prefix = 'test') => `${prefix}-${randomUUID().slice(0, 12)}`;

/** Each test builds its own tenant instead of truncating shared tables. */
export async function createProject(api: TestApi, body: Record<string, unknown> = {}): Promise<ProjectData> {
  const res = await api.request<ProjectData>('POST', '/api/agent-server/projects', {
    name: uniqueName('project'),
    ...body,
  });
  if (res.status !== 200) throw new Error(`createProject failed: ${res.status} ${res.text}`);
  return res.body.data;
}
