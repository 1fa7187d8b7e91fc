import { Code } from '@mantine/core';
import type { Project } from '../../../api/types.js';
import { useProject, useProjects } from '../../../app/project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { ProjectForm, useDeleteProject } from './project-form.js';

/** Projects: the tenants models, prompts, schemas, MCP servers and agents belong to. */
export function ProjectsPage() {
  const { setProjectId } = useProject();
  return (
    <ResourcePage<Project>
      title="Projects"
      what="project"
      intro="Tenants: models, prompts, schemas, MCP servers, agents and conversations belong to one project. The picker at the top chooses the project the pages work in."
      query={useProjects()}
      empty={{ title: 'No project yet', body: 'Create a project to start configuring agents.' }}
      columns={[
        { header: 'Description', cell: (p) => p.description ?? '—' },
        { header: 'Id', cell: (p) => <Code>{p.id}</Code> },
      ]}
      remove={useDeleteProject()}
      modalSize="md"
      form={(item, close) => (
        <ProjectForm
          project={item}
          onDone={(p) => {
            if (!item) setProjectId(p.id);
            close();
          }}
        />
      )}
    />
  );
}
