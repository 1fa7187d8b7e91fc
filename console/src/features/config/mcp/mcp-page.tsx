import { Badge, Button, Code, Modal } from '@mantine/core';
import { useState } from 'react';
import type { McpServer } from '../../../api/types.js';
import { AuthorizationActions, AuthorizationBadge } from '../shared/authorization.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { useCan } from '../../../app/auth.js';
import { InspectTools } from './inspect.js';
import { McpForm } from './mcp-form.js';
import { mcpAuthorization, useDeleteMcpServer, useMcpServers } from './queries.js';

function McpServers({ projectId }: { projectId: string }) {
  const [inspecting, setInspecting] = useState<McpServer | null>(null);
  const can = useCan();
  return (
    <ResourcePage<McpServer>
      need="develop"
      title="MCP servers"
      what="MCP server"
      intro="Tool servers this project's agents may use. Inspect one to see the tools it offers; Authorize one that wants OAuth sign-in."
      query={useMcpServers(projectId)}
      empty={{
        title: 'No MCP server in this project',
        body: 'Add an MCP server by its endpoint, inspect it to list its tools, then give it to an agent.',
      }}
      columns={[
        { header: 'Endpoint', cell: (s) => <Code>{s.endpoint}</Code> },
        { header: 'Transport', cell: (s) => <Badge variant="light">{s.transport}</Badge> },
        { header: 'Headers', cell: (s) => Object.keys(s.headers).join(', ') || '—' },
        {
          header: 'Authorization',
          cell: (s) => <AuthorizationBadge target={s} noun={mcpAuthorization.noun} />,
        },
      ]}
      remove={useDeleteMcpServer(projectId)}
      rowExtras={(s) =>
        can('develop') && (
          <>
            <AuthorizationActions projectId={projectId} target={s} calls={mcpAuthorization} />
            <Button
              size="compact-sm"
              variant="light"
              onClick={() => setInspecting(s)}
              aria-label={`Inspect ${s.name}`}
            >
              Inspect
            </Button>
          </>
        )
      }
      form={(item, close) => <McpForm projectId={projectId} item={item} onDone={close} />}
    >
      <Modal
        opened={inspecting !== null}
        onClose={() => setInspecting(null)}
        title={`Tools of ${inspecting?.name ?? ''}`}
        size="xl"
      >
        {inspecting && <InspectTools server={inspecting} />}
      </Modal>
    </ResourcePage>
  );
}

export function McpPage() {
  return <NeedProject>{(p) => <McpServers key={p.id} projectId={p.id} />}</NeedProject>;
}
