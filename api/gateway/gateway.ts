import { context } from '@opentelemetry/api';
import type { Context } from 'koa';
import type { Usage } from '../../activities/llm/types.js';
import type { AppDeps } from '../deps.js';
import type { DbProvider } from '../db/llm-config.tables.js';
import { chatJson, chatStream, embedJson, type JsonAnswer } from './calls.js';
import { invalidRequest } from './errors.js';
import { KeyResolver, type GatewayKey } from './keys.js';
import { fallbackCandidates, grantedModelNames, resolveModel, type Candidate } from './models.js';
import { noopPolicy, type Admission, type GatewayPolicy, type Outcome } from './policy.js';
import type { Surface } from './surface.js';
import { isObj } from './surfaces/json.js';
import { writeStream } from './stream-writer.js';
import {
  DEFAULT_RETRY,
  targetOf,
  toGatewayError,
  withRetriesAndFallbacks,
  type RetryOptions,
} from './upstream.js';

export interface GatewayOptions {
  policy?: GatewayPolicy;
  retry?: RetryOptions;
}

export type Operation = 'chat' | 'embed';

/** The virtual key as each surface's official SDK presents it. */
export function presentedSecret(ctx: Context, surface: Surface): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (surface.format === 'anthropic') return ctx.get('x-api-key') || bearer;
  if (surface.format === 'gemini') {
    const key = ctx.query.key;
    return ctx.get('x-goog-api-key') || (typeof key === 'string' ? key : undefined) || bearer;
  }
  return bearer;
}

/**
 * The request pipeline: authenticate → resolve the model → policy.admit →
 * upstream (retries, then fallbacks) → answer → policy.settle.
 */
export class Gateway {
  readonly keys: KeyResolver;
  private readonly policy: GatewayPolicy;
  private readonly retry: RetryOptions;

  constructor(
    private readonly deps: AppDeps,
    opts: GatewayOptions = {},
  ) {
    this.keys = new KeyResolver(deps.db, deps.changes);
    this.policy = opts.policy ?? noopPolicy;
    this.retry = opts.retry ?? DEFAULT_RETRY;
  }

  private async authorize(
    ctx: Context,
    surface: Surface,
  ): Promise<{ key: GatewayKey; providers: DbProvider[] }> {
    const key = await this.keys.authenticate(presentedSecret(ctx, surface));
    return { key, providers: await this.keys.providers(key) };
  }

  async listModels(ctx: Context, surface: Surface): Promise<void> {
    const { key, providers } = await this.authorize(ctx, surface);
    ctx.body = {
      object: 'list',
      data: grantedModelNames(key, providers).map((m) => ({
        id: m.id,
        object: 'model',
        created: 0,
        owned_by: m.owned_by,
      })),
    };
  }

  async handle(ctx: Context, surface: Surface, op: Operation, asked: string, stream: boolean): Promise<void> {
    const { key, providers } = await this.authorize(ctx, surface);
    const body: unknown = ctx.request.body;
    if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
    const request = body;
    const primary = resolveModel(key, providers, asked);
    const candidates = [primary, ...fallbackCandidates(key, providers, primary)];
    const admission = await this.policy.admit(key, {
      surface: surface.format,
      operation: op,
      stream,
      provider: {
        id: primary.provider.id,
        name: primary.provider.name,
        type: primary.provider.provider_type,
      },
      model: primary.model,
      max_output_tokens: maxOutputTokens(request),
      body: request,
    });
    const started = performance.now();
    const controller = new AbortController();
    ctx.res.on('close', () => {
      if (!ctx.res.writableFinished) controller.abort();
    });
    let answeredBy: Candidate | undefined;
    const outcome = (status: number, error?: string): Outcome => ({
      status,
      provider: answeredBy && { id: answeredBy.provider.id, name: answeredBy.provider.name },
      model: answeredBy?.model,
      latency_ms: performance.now() - started,
      error,
    });
    const callContext = this.policy.callContext?.(admission) ?? context.active();
    const attempt = <T>(fn: (c: Candidate) => Promise<T>) =>
      context
        .with(callContext, () =>
          withRetriesAndFallbacks(candidates, (c) => fn(c), this.retry, controller.signal),
        )
        .then((r) => {
          answeredBy = r.candidate;
          return r.value;
        });
    // Usage and counters are written after the answer has gone, not before it.
    const settle = (usage: Usage | undefined, out: Outcome) => this.settleLater(admission, usage, out);
    try {
      if (stream) {
        const opened = await attempt((c) =>
          chatStream(surface, targetOf(c.provider, this.deps.secrets), c.model, request, controller.signal),
        );
        const result = await writeStream(ctx, surface, request, opened, controller);
        settle(opened.usage(), outcome(result.status, result.error));
        return;
      }
      const call = op === 'chat' ? chatJson : embedJson;
      const answer: JsonAnswer = await attempt((c) =>
        call(surface, targetOf(c.provider, this.deps.secrets), c.model, request, controller.signal),
      );
      ctx.body = answer.body;
      settle(answer.usage, outcome(200));
    } catch (err) {
      if (controller.signal.aborted) {
        // The caller left: nobody to answer, and not a server failure worth an error log.
        settle(undefined, outcome(499, 'client disconnected'));
        ctx.status = 499; // nginx's "client closed request", for the request log
        ctx.respond = false;
        return;
      }
      const gerr = toGatewayError(err);
      settle(undefined, outcome(gerr.status, gerr.message));
      throw err;
    }
  }

  /**
   * A method, not a closure in `handle`: closures made there share its scope,
   * which holds the Koa context, so a settle still waiting for its counter
   * write would keep the whole request and response alive until the write
   * lands (under load that was seconds of requests, all promoted to the old
   * generation).
   */
  private settleLater(admission: Admission, usage: Usage | undefined, out: Outcome): void {
    this.policy
      .settle(admission, usage, out)
      .catch((err: unknown) => this.deps.logger.error({ err }, 'settling a gateway call failed'));
  }
}

function maxOutputTokens(body: Record<string, unknown>): number | undefined {
  const gen = body.generationConfig as { maxOutputTokens?: unknown } | undefined;
  const value = body.max_completion_tokens ?? body.max_tokens ?? gen?.maxOutputTokens;
  return typeof value === 'number' ? value : undefined;
}
