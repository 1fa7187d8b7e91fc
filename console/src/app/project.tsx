import { useQuery } from '@tanstack/react-query';
import { createContext, useContext, useState, type ReactNode } from 'react';
import { api, unwrap } from '../api/client.js';
import type { Project } from '../api/types.js';

interface ProjectState {
  projects: Project[];
  project: Project | undefined;
  setProjectId: (id: string) => void;
  loading: boolean;
}

const KEY = 'agent-server.project';
const Ctx = createContext<ProjectState>({
  projects: [],
  project: undefined,
  setProjectId: () => {},
  loading: true,
});

export function useProjects() {
  return useQuery({
    queryKey: ['projects'],
    queryFn: () =>
      unwrap<Project[]>(api.GET('/api/agent-server/projects', { params: { query: { limit: 200 } } })),
  });
}

/**
 * The project the pages work in, remembered in this browser; the first one when none was chosen.
 * The picker lists the newest 200; a chosen project beyond them (or one a link names) is read by id.
 */
export function ProjectProvider({ children }: { children: ReactNode }) {
  const { data, isLoading } = useProjects();
  const [id, setId] = useState(() => localStorage.getItem(KEY) ?? '');
  const listed = data ?? [];
  const inList = listed.find((p) => p.id === id);
  const byId = useQuery({
    queryKey: ['projects', id],
    enabled: Boolean(id) && data !== undefined && !inList,
    retry: false,
    queryFn: () => unwrap<Project>(api.GET('/api/agent-server/projects/{id}', { params: { path: { id } } })),
  });
  const chosen = inList ?? byId.data;
  const projects = chosen && !inList ? [chosen, ...listed] : listed;
  // Fall back to the newest project only when none was chosen or the chosen one is gone.
  const project = chosen ?? (!id || byId.isError ? listed[0] : undefined);
  // The fallback becomes the choice, so a project created later does not take its place. Set while
  // rendering (React renders again at once, before the children see the old id), not in an effect.
  if (project && project.id !== id) setId(project.id);
  const setProjectId = (next: string) => {
    localStorage.setItem(KEY, next);
    setId(next);
  };
  return (
    <Ctx.Provider value={{ projects, project, setProjectId, loading: isLoading || byId.isLoading }}>
      {children}
    </Ctx.Provider>
  );
}

export function useProject(): ProjectState {
  return useContext(Ctx);
}
