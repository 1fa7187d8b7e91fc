import { Title } from '@mantine/core';
import { Route, Routes, useParams } from 'react-router';
import { useProject } from '../../app/project.js';
import { RouteError } from '../../app/route-error.js';
import { Empty } from '../../components/empty.js';
import { Loading } from '../../components/loading.js';
import { PromptDetail } from './prompt-detail.js';
import { PromptList } from './prompt-list.js';

function Detail({ projectId }: { projectId: string }) {
  const { name = '' } = useParams();
  return <PromptDetail key={name} projectId={projectId} name={name} />;
}

/** Prompts: /prompts (the list) and /prompts/<name> (versions, labels, diff). */
export function Component() {
  const { project, loading } = useProject();
  if (loading) return <Loading what="Loading projects" />;
  if (!project)
    return (
      <Empty title="No project yet">
        Prompts belong to a project: create one in Configuration → Projects.
      </Empty>
    );
  return (
    <Routes>
      <Route
        index
        element={
          <>
            <Title order={3} mb="md">
              Prompts
            </Title>
            <PromptList projectId={project.id} />
          </>
        }
      />
      <Route path=":name" element={<Detail projectId={project.id} />} />
      <Route path="*" element={<RouteError notFound />} />
    </Routes>
  );
}
