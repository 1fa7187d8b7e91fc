import { trace } from '@opentelemetry/api';
import Joi from 'joi';
import type { Context } from 'koa';
import { clientMetadataDocument, publicBaseUrl } from '../../core/mcp/oauth/index.js';
import { REDACTED } from '../../core/security/redact.js';
import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import type { Validated } from '../middleware/validate.js';
import { McpOAuthService, type CallbackOutcome } from '../services/mcp-oauth.service.js';
import { RunWaitsService } from '../services/run-waits.service.js';

type CallbackQuery = { code?: string; state?: string; iss?: string; error?: string };

const param = Joi.string().allow('').max(4_096);
const callbackQuery = Joi.object({ code: param, state: param, iss: param, error: param }).unknown(true);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(ctx: Context, outcome: CallbackOutcome): void {
  ctx.status = outcome.status;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(outcome.title)}</title>` +
    '<style>body{font:16px system-ui,sans-serif;margin:4rem auto;max-width:36rem;padding:0 1rem}</style></head>' +
    `<body><h1>${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.message)}</p></body></html>`;
}

/**
 * The OAuth pages at the server's root, where PUBLIC_URL points: the
 * callback authorization servers send people back to (a top-level browser
 * GET: no ADMIN_TOKEN, the state is the credential) and our Client ID
 * Metadata Document.
 */
export function oauthRoutes(deps: AppDeps): ApiRouter {
  const svc = new McpOAuthService(deps.db, deps.secrets, publicBaseUrl(deps.config));
  return new ApiRouter('/oauth', 'OAuth', { raw: true })
    .access({ read: 'public', write: 'public' })
    .route<Validated<never, CallbackQuery>>(
      {
        method: 'get',
        path: '/callback',
        public: true,
        summary:
          'Where an authorization server sends a person back after authorizing an MCP server or A2A agent',
        description:
          'Completes the authorization started by POST /api/agent-server/mcp-servers/{id}/authorize or ' +
          '/a2a-agents/{id}/authorize (or by a run that met one needing authorization): `state` names the flow (single use, 10 minutes), `iss` ' +
          '(RFC 9207) must name its authorization server, `code` is exchanged with PKCE. Answers a small HTML page; ' +
          '400 for an unknown, used or expired state or a wrong issuer.',
        request: { query: callbackQuery },
        produces: 'text/html',
      },
      async (ctx, { query }) => {
        // The code and the state are credentials for a few minutes: not in the request's span.
        if (ctx.querystring) trace.getActiveSpan()?.setAttribute('url.query', REDACTED);
        const outcome = await svc.callback(query);
        page(ctx, outcome);
        if (outcome.authorized) {
          const { serverId, endUserId } = outcome.authorized;
          await new RunWaitsService(deps)
            .authorized(serverId, endUserId)
            .catch((err: unknown) =>
              deps.logger.warn(
                { err: err instanceof Error ? err.message : String(err), serverId },
                'could not wake the runs waiting for this authorization',
              ),
            );
        }
      },
    )
    .route(
      {
        method: 'get',
        path: '/client-metadata.json',
        public: true,
        summary: 'Our OAuth Client ID Metadata Document (its URL is our client_id where supported)',
        produces: 'application/json',
      },
      (ctx) => {
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = clientMetadataDocument(publicBaseUrl(deps.config));
      },
    );
}
