import { Tabs } from '@mantine/core';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { AgentsPage } from './agents/agents-page.js';
import { KeysPage } from './keys/keys-page.js';
import { McpPage } from './mcp/mcp-page.js';
import { ModelsPage } from './models/models-page.js';
import { ProjectsPage } from './projects/projects-page.js';
import { ProvidersPage } from './providers/providers-page.js';
import { SchemasPage } from './schemas/schemas-page.js';

const TABS = [
  { path: 'providers', label: 'Providers', page: <ProvidersPage /> },
  { path: 'models', label: 'Models', page: <ModelsPage /> },
  { path: 'schemas', label: 'Schemas', page: <SchemasPage /> },
  { path: 'mcp-servers', label: 'MCP servers', page: <McpPage /> },
  { path: 'agents', label: 'Agents', page: <AgentsPage /> },
  { path: 'virtual-keys', label: 'Virtual keys', page: <KeysPage /> },
  { path: 'projects', label: 'Projects', page: <ProjectsPage /> },
];

/** Configuration: one tab (and one address, /config/<tab>) per resource. */
export function Component() {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const current = TABS.find((t) => pathname.startsWith(`/config/${t.path}`))?.path ?? null;
  return (
    <>
      <Tabs value={current} onChange={(v) => v && void navigate(`/config/${v}`)} mb="md">
        <Tabs.List aria-label="Configuration">
          {TABS.map((t) => (
            <Tabs.Tab key={t.path} value={t.path}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <Routes>
        <Route index element={<Navigate to="providers" replace />} />
        {TABS.map((t) => (
          <Route key={t.path} path={t.path} element={t.page} />
        ))}
        <Route path="*" element={<Navigate to="providers" replace />} />
      </Routes>
    </>
  );
}
