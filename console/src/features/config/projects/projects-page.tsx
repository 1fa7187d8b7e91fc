import { Code } from '@mantine/core';
import type { Project } from '../../../api/types.js';
import { useAuth, useCan, useOrgAdmin } from '../../../app/auth.js';
import { useProject, useProjects } from '../../../app/project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { MembersButton } from './members.js';
import { ProjectForm, useDeleteProject } from './project-form.js';

/**
 * Projects: the tenants models, prompts, schemas, MCP servers and agents
 * belong to. Organisation admins create them; each project's admins change it
 * and, in users mode, its members.
 */
export function ProjectsPage() {
  const { setProjectId } = useProject();
  const users = useAuth().mode === 'users';
  const can = useCan();
  const orgAdmin = useOrgAdmin();
  return (
    <ResourcePage<Project>
      need="admin"
      canCreate={orgAdmin}
      canChange={(p) => can('admin', p.id)}
      rowExtras={(p) => users && can('admin', p.id) && <MembersButton project={p} />}
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
