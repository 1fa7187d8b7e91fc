import { Anchor, AppShell, Badge, Burger, Group, NavLink, Select, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Suspense } from 'react';
import { NavLink as RouterLink, Outlet } from 'react-router';
import { Loading } from '../components/loading.js';
import { AccountMenu } from './account-menu.js';
import { useAuth, useOrgAdmin } from './auth.js';
import { AuthGate } from './auth-gate.js';
import { ColorSchemeToggle } from './color-scheme-toggle.js';
import classes from './layout.module.css';
import { ProjectProvider, useProject } from './project.js';
import { COUNTED, useWaitingRuns } from './waiting-runs.js';

const NAV = [
  { to: '/playground', label: 'Playground' },
  { to: '/sessions', label: 'Sessions' },
  { to: '/waiting', label: 'Waiting runs' },
  { to: '/traces', label: 'Traces' },
  { to: '/prompts', label: 'Prompts' },
  { to: '/evals', label: 'Evals' },
  { to: '/config', label: 'Configuration' },
  { to: '/usage', label: 'Usage' },
];
/** Users mode's own pages: one's API tokens, and the organisation's users and audit log for its admins. */
const USERS_NAV = [
  { to: '/tokens', label: 'API tokens', orgAdmin: false },
  { to: '/users', label: 'Users', orgAdmin: true },
  { to: '/audit', label: 'Audit log', orgAdmin: true },
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

/** The Waiting runs link's count of this project's runs that wait for someone. */
function WaitingBadge() {
  const { project } = useProject();
  const waiting = useWaitingRuns(project?.id);
  if (!waiting) return null;
  const shown = waiting >= COUNTED ? `${COUNTED}+` : String(waiting);
  return (
    <Badge size="sm" color="orange" circle={shown.length < 3} aria-label={`${shown} waiting`}>
      {shown}
    </Badge>
  );
}

/** The page links; on a narrow window choosing one closes the menu. */
function Navigation({ onNavigate }: { onNavigate: () => void }) {
  const auth = useAuth();
  const orgAdmin = useOrgAdmin();
  const shown = [...NAV, ...(auth.mode === 'users' ? USERS_NAV.filter((n) => orgAdmin || !n.orgAdmin) : [])];
  return shown.map((n) => (
    <NavLink
      key={n.to}
      component={RouterLink}
      to={n.to}
      label={n.label}
      onClick={onNavigate}
      rightSection={n.to === '/waiting' ? <WaitingBadge /> : undefined}
    />
  ));
}

/**
 * The shell: navigation, the project picker, the colour scheme, who is
 * signed in, and the login page or token prompt when the API asks for one. Below the `md` breakpoint (a
 * tablet's 768 px included) the side bar folds behind the menu button.
 */
export function Layout() {
  const [opened, { toggle, close }] = useDisclosure();
  return (
    <AuthGate>
      <ProjectProvider>
        <Anchor href="#main" className={classes.skip}>
          Skip to content
        </Anchor>
        <AppShell
          header={{ height: 52 }}
          navbar={{ width: 200, breakpoint: 'md', collapsed: { mobile: !opened } }}
          padding="md"
        >
          <AppShell.Header>
            <Group h="100%" px="md" justify="space-between" wrap="nowrap">
              <Group gap="xs" wrap="nowrap">
                <Burger opened={opened} onClick={toggle} hiddenFrom="md" size="sm" aria-label="Menu" />
                <Title order={4}>agent-server</Title>
                <Text size="sm" c="dimmed" visibleFrom="sm">
                  console
                </Text>
              </Group>
              <Group gap="xs" wrap="nowrap">
                <ColorSchemeToggle />
                <ProjectPicker />
                <AccountMenu />
              </Group>
            </Group>
          </AppShell.Header>
          <AppShell.Navbar p="xs" aria-label="Pages">
            <Navigation onNavigate={close} />
          </AppShell.Navbar>
          <AppShell.Main id="main" tabIndex={-1} className={classes.main}>
            <Suspense fallback={<Loading />}>
              <Outlet />
            </Suspense>
          </AppShell.Main>
        </AppShell>
      </ProjectProvider>
    </AuthGate>
  );
}
