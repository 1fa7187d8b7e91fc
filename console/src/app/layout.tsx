import { AppShell, Burger, Group, NavLink, Select, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Suspense } from 'react';
import { NavLink as RouterLink, Outlet } from 'react-router';
import { Loading } from '../components/loading.js';
import { ProjectProvider, useProject } from './project.js';
import { TokenGate } from './token-gate.js';

const NAV = [
  { to: '/playground', label: 'Playground' },
  { to: '/sessions', label: 'Sessions' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/traces', label: 'Traces' },
  { to: '/prompts', label: 'Prompts' },
  { to: '/config', label: 'Configuration' },
  { to: '/usage', label: 'Usage' },
];

function ProjectPicker() {
  const { projects, project, setProjectId } = useProject();
  const choose = (v: string | null) => v && setProjectId(v);
  return (
    <Select
      aria-label="Project"
      placeholder={projects.length ? 'Project' : 'No project yet'}
      data={projects.map((p) => ({ value: p.id, label: p.name }))}
      value={project?.id ?? null}
      onChange={choose}
      w={220}
      size="xs"
      allowDeselect={false}
    />
  );
}

/** The shell: navigation, the project picker, and the token prompt when the API asks for one. */
export function Layout() {
  const [opened, { toggle }] = useDisclosure();
  return (
    <TokenGate>
      <ProjectProvider>
        <AppShell
          header={{ height: 52 }}
          navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }}
          padding="md"
        >
          <AppShell.Header>
            <Group h="100%" px="md" justify="space-between">
              <Group gap="xs">
                <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
                <Title order={4}>agent-server</Title>
                <Text size="sm" c="dimmed">
                  console
                </Text>
              </Group>
              <ProjectPicker />
            </Group>
          </AppShell.Header>
          <AppShell.Navbar p="xs" aria-label="Pages">
            {NAV.map((n) => (
              <NavLink key={n.to} component={RouterLink} to={n.to} label={n.label} />
            ))}
          </AppShell.Navbar>
          <AppShell.Main>
            <Suspense fallback={<Loading />}>
              <Outlet />
            </Suspense>
          </AppShell.Main>
        </AppShell>
      </ProjectProvider>
    </TokenGate>
  );
}
