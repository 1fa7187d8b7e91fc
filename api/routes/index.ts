import type { AppDeps } from '../deps.js';
import type { ApiRouter } from '../http/api-router.js';
import { agentRoutes } from './agents.routes.js';
import { authRoutes } from './auth.routes.js';
import { conversationRoutes } from './conversations.routes.js';
import { converseRoutes } from './converse.routes.js';
import { datasetRoutes } from './datasets.routes.js';
import { docsRoutes } from './docs.routes.js';
import { evalRoutes } from './evals.routes.js';
import { healthRoutes } from './health.routes.js';
import { mcpServerRoutes } from './mcp-servers.routes.js';
import { a2aAgentRoutes } from './a2a-agents.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import { oidcRoutes } from './oidc.routes.js';
import { modelRoutes } from './models.routes.js';
import { projectRoutes } from './projects.routes.js';
import { projectMemberRoutes } from './project-members.routes.js';
import { promptRoutes } from './prompts.routes.js';
import { providerRoutes } from './providers.routes.js';
import { runListRoutes } from './runs.routes.js';
import { schemaRoutes } from './schemas.routes.js';
import { skillRoutes } from './skills.routes.js';
import { traceRoutes } from './traces.routes.js';
import { usageRoutes } from './usage.routes.js';
import { tokenRoutes } from './tokens.routes.js';
import { userRoutes } from './users.routes.js';
import { virtualKeyRoutes } from './virtual-keys.routes.js';
import { virtualKeyUsageRoutes } from './virtual-key-usage.routes.js';
import { webhookRoutes } from './webhooks.routes.js';
import { cronRoutes } from './crons.routes.js';
import { auditEventRoutes } from './audit-events.routes.js';
import { langGraphRouters } from '../protocols/langgraph/index.js';
import { a2aRouter } from '../protocols/a2a/door.js';
import { mcpRouters } from '../protocols/mcp/index.js';
import { scimRouters } from '../protocols/scim/index.js';

/**
 * Every router of the API, in one list: the app mounts them and the OpenAPI
 * document is generated from them. Add a resource's router here.
 */
export function buildRouters(deps: AppDeps): ApiRouter[] {
  const routers: ApiRouter[] = [
    healthRoutes(deps),
    authRoutes(deps),
    userRoutes(deps),
    tokenRoutes(deps),
    projectRoutes(deps),
    projectMemberRoutes(deps),
    providerRoutes(deps),
    virtualKeyRoutes(deps),
    virtualKeyUsageRoutes(deps),
    modelRoutes(deps),
    mcpServerRoutes(deps),
    a2aAgentRoutes(deps),
    oauthRoutes(deps),
    oidcRoutes(deps),
    agentRoutes(deps),
    skillRoutes(deps),
    promptRoutes(deps),
    schemaRoutes(deps),
    datasetRoutes(deps),
    evalRoutes(deps),
    ...conversationRoutes(deps),
    // Before converse's GET /runs/{run_id}: GET /runs/statistics is not a run.
    ...runListRoutes(deps),
    ...converseRoutes(deps),
    usageRoutes(deps),
    traceRoutes(deps),
    ...webhookRoutes(deps),
    cronRoutes(deps),
    auditEventRoutes(deps),
    ...langGraphRouters(deps),
    a2aRouter(deps),
    ...mcpRouters(deps),
    ...scimRouters(deps),
  ];
  routers.push(docsRoutes(() => routers.flatMap((r) => r.routes)));
  return routers;
}
