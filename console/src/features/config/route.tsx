import { Tabs } from '@mantine/core';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { useOrgAdmin } from '../../app/auth.js';
import { RouteError } from '../../app/route-error.js';
import { AgentsPage } from './agents/agents-page.js';
import { KeysPage } from './keys/keys-page.js';
import { McpPage } from './mcp/mcp-page.js';
import { A2aPage } from './a2a/a2a-page.js';
import { ModelsPage } from './models/models-page.js';
import { ProjectsPage } from './projects/projects-page.js';
import { ProvidersPage } from './providers/providers-page.js';
import { SchemasPage } from './schemas/schemas-page.js';
import { WebhooksPage } from './webhooks/webhooks-page.js';

const TABS = [
  { path: 'providers', label: 'Providers', page: <ProvidersPage />, orgAdmin: true },
  { path: 'models', label: 'Models', page: <ModelsPage /> },
  { path: 'schemas', label: 'Schemas', page: <SchemasPage /> },
  { path: 'mcp-servers', label: 'MCP servers', page: <McpPage /> },
  { path: 'a2a-agents', label: 'A2A agents', page: <A2aPage /> },
  { path: 'agents', label: 'Agents', page: <AgentsPage /> },
  { path: 'virtual-keys', label: 'Virtual keys', page: <KeysPage />, orgAdmin: true },
  { path: 'webhooks', label: 'Webhooks', page: <WebhooksPage /> },
  { path: 'projects', label: 'Projects', page: <ProjectsPage /> },
];

/**
 * Configuration: one tab (and one address, /config/<tab>) per resource. /config
 * opens the first tab; any other address under it is an unknown page.
 * Providers and virtual keys belong to the organisation: only its admins see them.
 */
export function Component() {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const orgAdmin = useOrgAdmin();
  const tabs = TABS.filter((t) => orgAdmin || !t.orgAdmin);
  const current = tabs.find((t) => pathname.startsWith(`/config/${t.path}`))?.path ?? null;
  if (!current && pathname.replace(/\/+$/, '') !== '/config') return <RouteError notFound />;
  return (
    <>
      <Tabs value={current} onChange={(v) => v && void navigate(`/config/${v}`)} mb="md">
        <Tabs.List aria-label="Configuration">
          {tabs.map((t) => (
            <Tabs.Tab key={t.path} value={t.path}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <Routes>
        {/* Absolute: a relative target resolves against the current address, which grew it forever. */}
        <Route index element={<Navigate to={`/config/${tabs[0]!.path}`} replace />} />
        {tabs.map((t) => (
          <Route key={t.path} path={t.path} element={t.page} />
        ))}
        <Route path="*" element={<RouteError notFound />} />
      </Routes>
    </>
  );
}
