import { context } from '@opentelemetry/api';
import type { Context } from 'koa';
import type { Usage } from '../../core/llm/types.js';
import type { AppDeps } from '../deps.js';
import type { DbProvider } from '../../core/db/llm-config.tables.js';
import { chatJson, chatStream, embedJson, type JsonAnswer } from './calls.js';
import { HOPS_HEADER, MAX_GATEWAY_HOPS, parseHops } from '../../core/llm/hops.js';
import { readJsonBody } from '../http/body-reader.js';
import { GatewayError, invalidRequest } from './errors.js';
import { KeyResolver, type GatewayKey } from './keys.js';
import { fallbackCandidates, grantedModelNames, resolveModel, type Candidate } from './models.js';
import { noopPolicy, type Admission, type GatewayPolicy, type Outcome } from './policy.js';
import type { Surface } from './surface.js';
import { isObj } from './surfaces/json.js';
import { askedChoices, askedOutputLimit } from './surfaces/numbers.js';
import { writeStream } from './stream-writer.js';
import { DEFAULT_RETRY, toGatewayError, withRetriesAndFallbacks, type RetryOptions } from './upstream.js';
import { targetOf } from '../../core/llm/provider-target.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { ModelCallAttributes } from '../../core/telemetry/metrics/genai.js';

export interface GatewayOptions {
  policy?: GatewayPolicy;
  retry?: RetryOptions;
}

export type Operation = 'chat' | 'embed';
/** The model a request asks for and whether it streams (from its body or path). */
export type Target = { asked: string; stream: boolean };

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
  /** Models an upstream has answered for, by provider id: model labels (see `attributes`). */
  private readonly answeredModels = new Map<string, Set<string>>();
  private answeredCount = 0;

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

  /** `target` reads the asked model and streaming from the body, which is read only once the key is good. */
  async handle(
    ctx: Context,
    surface: Surface,
    op: Operation,
    target: (ctx: Context) => Target,
  ): Promise<void> {
    // For the metrics (recorded in `finally`), filled in as the pipeline gets there.
    const entered = performance.now();
    let key: GatewayKey | undefined;
    let primary: Candidate | undefined;
    let answeredBy: Candidate | undefined;
    let upstreamMs: number | undefined;
    let usage: Usage | undefined;
    let labels: ModelCallAttributes | undefined;
    let status = 200;
    try {
      const hops = incomingHops(ctx);
      const authorized = await this.authorize(ctx, surface);
      key = authorized.key;
      await readJsonBody(ctx);
      const { asked, stream } = target(ctx);
      const body: unknown = ctx.request.body;
      if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
      let request = body;
      if (op === 'chat') surface.validateChat?.(request);
      primary = resolveModel(key, authorized.providers, asked);
      // A surface with per-request state (the Responses API) renders this request with its own
      // surface and body (earlier turns expanded), and stores its answer with the usage row.
      const scoped = await surface.begin?.(key, request);
      if (scoped) ({ surface, body: request } = scoped);
      const persist = scoped?.persist;
      const candidates = [primary, ...fallbackCandidates(key, authorized.providers, primary)];
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
        max_output_tokens: askedOutputLimit(request),
        choices: askedChoices(request),
        body: request,
      });
      const started = performance.now();
      const controller = new AbortController();
      ctx.res.on('close', () => {
        if (!ctx.res.writableFinished) controller.abort();
      });
      const outcome = (s: number, error?: string): Outcome => {
        status = s;
        upstreamMs = performance.now() - started;
        if (metrics().enabled) labels = this.attributes(surface, op, key, answeredBy ?? primary, s);
        return {
          status: s,
          provider: answeredBy && { id: answeredBy.provider.id, name: answeredBy.provider.name },
          model: answeredBy?.model,
          latency_ms: upstreamMs,
          error,
          labels,
        };
      };
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
      // The usage row is written before the answer's last bytes leave (a process
      // killed after answering has stored it); the counters follow without holding it.
      const settle = (used: Usage | undefined, out: Outcome): Promise<void> => {
        usage = used;
        const logged = this.settleLater(admission, used, out);
        return persist && out.status < 400 ? Promise.all([logged, persist()]).then(() => undefined) : logged;
      };
      try {
        if (stream) {
          const opened = await attempt((c) =>
            chatStream(
              surface,
              targetOf(c.provider, this.deps.secrets, hops),
              c.model,
              request,
              controller.signal,
            ),
          );
          setServerTiming(ctx, entered, started, performance.now());
          let settled = false;
          const result = await writeStream(ctx, surface, request, opened, controller, () => {
            settled = true;
            return settle(opened.usage(), outcome(200));
          });
          if (!settled) void settle(opened.usage(), outcome(result.status, result.error));
          return;
        }
        const call = op === 'chat' ? chatJson : embedJson;
        const answer: JsonAnswer = await attempt((c) =>
          call(surface, targetOf(c.provider, this.deps.secrets, hops), c.model, request, controller.signal),
        );
        const answered = performance.now();
        await settle(answer.usage, outcome(200));
        setServerTiming(ctx, entered, started, answered);
        ctx.body = answer.body;
      } catch (err) {
        if (controller.signal.aborted) {
          // The caller left: nobody to answer, and not a server failure worth an error log.
          void settle(undefined, outcome(499, 'client disconnected'));
          ctx.status = 499; // nginx's "client closed request", for the request log
          ctx.respond = false;
          return;
        }
        const gerr = toGatewayError(err);
        void settle(undefined, outcome(gerr.status, gerr.message));
        throw err;
      }
    } catch (err) {
      // Refused before anything went upstream (authentication, model, limits…).
      if (upstreamMs === undefined) status = toGatewayError(err).status;
      throw err;
    } finally {
      if (metrics().enabled)
        metrics().gateway.end(
          labels ?? this.attributes(surface, op, key, answeredBy ?? primary, status),
          status,
          upstreamMs === undefined ? undefined : upstreamMs / 1000,
          upstreamMs === undefined ? undefined : Math.max(0, performance.now() - entered - upstreamMs) / 1000,
          usage,
        );
    }
  }

  /**
   * The request's labels. The model is caller text under a wildcard grant, so
   * it is a label only when configuration names it (a grant or a fallback)
   * or an upstream has answered for it in this process (vendors' catalogs are
   * bounded); otherwise `_OTHER`.
   */
  private attributes(
    surface: Surface,
    op: Operation,
    key: GatewayKey | undefined,
    c: Candidate | undefined,
    status: number,
  ): ModelCallAttributes {
    let model: string | undefined;
    if (c && key) {
      let answered = this.answeredModels.get(c.provider.id);
      if (status < 400 && !answered?.has(c.model) && this.answeredCount < 1_000) {
        if (!answered) this.answeredModels.set(c.provider.id, (answered = new Set()));
        answered.add(c.model);
        this.answeredCount++;
      }
      model =
        answered?.has(c.model) ||
        key.grants.some((g) => g.provider_id === c.provider.id && g.model_names.includes(c.model)) ||
        key.fallbacks.includes(`${c.provider.name}/${c.model}`)
          ? c.model
          : '_OTHER';
    }
    return metrics().genai.attributes({
      operation: op === 'embed' ? 'embeddings' : 'chat',
      surface: surface.format,
      providerType: c?.provider.provider_type,
      providerName: c?.provider.name,
      model,
      keyId: key && this.deps.config.metrics.perKey ? key.id : undefined,
    });
  }

  /**
   * A method, not a closure in `handle`: closures made there share its scope,
   * which holds the Koa context, so a settle still waiting for its counter
   * write would keep the whole request and response alive until the write
   * lands (under load that was seconds of requests, all promoted to the old
   * generation).
   */
  private settleLater(admission: Admission, usage: Usage | undefined, out: Outcome): Promise<void> {
    const { logged, settled } = this.policy.settle(admission, usage, out);
    settled.catch((err: unknown) => this.deps.logger.error({ err }, 'settling a gateway call failed'));
    // A failed usage write is logged with the settle; the answer goes out regardless.
    return logged.catch(() => undefined);
  }
}

/**
 * `Server-Timing: gateway;dur=…, upstream;dur=…` (milliseconds): the upstream's
 * share is from the first attempt's start to its answer (a stream: to its
 * headers, when ours go out), retries and fallbacks included; the gateway's is
 * everything else so far (authentication, admission, translation, the usage row).
 */
function setServerTiming(ctx: Context, entered: number, started: number, answered: number): void {
  const upstream = answered - started;
  const gateway = performance.now() - entered - upstream;
  ctx.set('Server-Timing', `gateway;dur=${gateway.toFixed(2)}, upstream;dur=${upstream.toFixed(2)}`);
}

/** Refuses a request that has looped through gateways (a 4xx: the official SDKs retry every 5xx). */
function incomingHops(ctx: Context): number {
  const hops = parseHops(ctx.get(HOPS_HEADER));
  if (hops === undefined) throw invalidRequest(`${HOPS_HEADER} must be a non-negative integer`);
  if (hops >= MAX_GATEWAY_HOPS)
    throw new GatewayError(
      400,
      'invalid_request',
      `request refused: it has already passed through the gateway ${hops} times (${HOPS_HEADER}); ` +
        "a provider's base_url probably points back at this gateway",
    );
  return hops;
}
