import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { mcpRouter } from './door.js';

/** Every router of the MCP door (`/api/mcp/{project_id}`). */
export function mcpRouters(deps: AppDeps): ApiRouter[] {
  return [mcpRouter(deps)];
}
