import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { GatewayError, invalidRequest } from './errors.js';
import { Gateway, type GatewayOptions, type Target } from './gateway.js';
import { mountResponsesRoutes } from './responses/responses.routes.js';
import { ResponsesStore } from './responses/store.js';
import { SURFACES } from './surfaces/index.js';
import { responsesSurface } from './surfaces/responses/index.js';

const GEMINI_ACTIONS = new Set([
  'generateContent',
  'streamGenerateContent',
  'embedContent',
  'batchEmbedContents',
]);

/**
 * Gemini's model is everything between `models/` and the last `:`, so
 * `models/<provider>/<model id>:generateContent` works (the official SDK
 * puts a slashed model straight into the path).
 */
function geminiTarget(ctx: Context): { model: string; action: string } {
  const rest = ctx.path.replace(/^\/api\/gateway\/gemini\/v1(beta)?\/models\//, '');
  const colon = rest.lastIndexOf(':');
  const action = colon > 0 ? rest.slice(colon + 1) : '';
  if (!GEMINI_ACTIONS.has(action)) throw new GatewayError(404, 'not_found', `no such method: ${rest}`);
  return { model: decodeModel(rest.slice(0, colon)), action };
}

/** The model's path segment, percent-decoded; malformed escapes (or a lone surrogate's bytes) are a 400. */
function decodeModel(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidRequest('the model in the path is not valid percent-encoded UTF-8');
  }
}

/** The vendor-compatible surfaces, mounted before the configuration API. */
export function gatewayRouter(deps: AppDeps, opts: GatewayOptions = {}): Router {
  const gateway = new Gateway(deps, opts);
  const router = new Router({ prefix: '/api/gateway', sensitive: true });
  const { openai, anthropic, gemini } = SURFACES;
  // Read by the gateway once it has authenticated the caller and read the body.
  const modelOf = (ctx: Context) => {
    const model = (ctx.request.body as { model?: unknown } | undefined)?.model;
    return typeof model === 'string' ? model : '';
  };
  const streamed = (ctx: Context) => (ctx.request.body as { stream?: unknown } | undefined)?.stream === true;
  const fromBody = (ctx: Context): Target => ({ asked: modelOf(ctx), stream: streamed(ctx) });
  const unstreamed = (ctx: Context): Target => ({ asked: modelOf(ctx), stream: false });

  router.post('/openai/v1/chat/completions', (ctx) => gateway.handle(ctx, openai, 'chat', fromBody));
  router.post('/openai/v1/embeddings', (ctx) => gateway.handle(ctx, openai, 'embed', unstreamed));
  const store = new ResponsesStore(deps.db, deps.config.gateway.responsesRetentionDays, deps.logger);
  const responses = responsesSurface(store);
  router.post('/openai/v1/responses', (ctx) => gateway.handle(ctx, responses, 'chat', fromBody));
  mountResponsesRoutes(router, gateway.keys, responses, store);
  router.get('/openai/v1/models', (ctx) => gateway.listModels(ctx, openai));
  router.post('/anthropic/v1/messages', (ctx) => gateway.handle(ctx, anthropic, 'chat', fromBody));
  const geminiAction = (ctx: Context) => {
    const { model, action } = geminiTarget(ctx);
    if (action === 'embedContent' || action === 'batchEmbedContents')
      return gateway.handle(ctx, gemini, 'embed', () => ({ asked: model, stream: false }));
    return gateway.handle(ctx, gemini, 'chat', () => ({
      asked: model,
      stream: action === 'streamGenerateContent',
    }));
  };
  // @google/genai asks for v1 once given a base URL; both versions take the same bodies here.
  router.post('/gemini/v1beta/models/*rest', geminiAction);
  router.post('/gemini/v1/models/*rest', geminiAction);
  return router;
}
