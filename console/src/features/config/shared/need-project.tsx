import type { ReactNode } from 'react';
import { Button } from '@mantine/core';
import { Link } from 'react-router';
import type { Project } from '../../../api/types.js';
import { useProject } from '../../../app/project.js';
import { Empty } from '../../../components/empty.js';
import { Loading } from '../../../components/loading.js';

/** Project-scoped tabs render only once a project is chosen; without any, they say how to make one. */
export function NeedProject({ children }: { children: (project: Project) => ReactNode }) {
  const { project, loading } = useProject();
  if (loading) return <Loading what="Loading projects" />;
  if (!project)
    return (
      <Empty
        title="No project yet"
        action={
          <Button component={Link} to="/config/projects" variant="light">
            Create a project
          </Button>
        }
      >
        Models, prompts, schemas, MCP servers and agents belong to a project. Create one first.
      </Empty>
    );
  return <>{children(project)}</>;
}
