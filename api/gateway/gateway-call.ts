import { context } from '@opentelemetry/api';
import type { Context } from 'koa';
import type { DbProvider } from '../../core/db/tables/index.js';
import { HOPS_HEADER, MAX_GATEWAY_HOPS, parseHops } from '../../core/llm/hops.js';
import { targetOf } from '../../core/llm/provider-target.js';
import type { Usage } from '../../core/llm/types.js';
import type { Logger } from '../../core/logger.js';
import type { MeteredCall, ModelCallMeter } from '../../core/metering/model-call.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { ModelCallAttributes } from '../../core/telemetry/metrics/genai.js';
import type { SecretBox } from '../../core/crypto/secrets.js';
import { readJsonBody } from '../http/body-reader.js';
import { chatJson, chatStream, embedJson, type UpstreamAsk } from './calls.js';
import { GatewayError, invalidRequest, modelNotGranted } from './errors.js';
import type { GatewayKey } from '../../core/security/virtual-keys.js';
import type { KeyResolver } from './keys.js';
import { fallbackCandidates, resolveModel, ungrantedPrefix, type Candidate } from './models.js';
import { refusalError } from './refusals.js';
import type { Surface } from './surface.js';
import { isObj } from './surfaces/json.js';
import { askedChoices, askedOutputLimit } from './surfaces/numbers.js';
import { writeStream } from './stream-writer.js';
import { toGatewayError, withRetriesAndFallbacks, type RetryOptions } from './upstream.js';

export type Operation = 'chat' | 'embed';
/** The model a request asks for and whether it streams (from its body or path). */
export type Target = { asked: string; stream: boolean };

/** What a request's metric labels are made of. */
export interface LabelledCall {
  surface: Surface;
  op: Operation;
  key: GatewayKey | undefined;
  candidate: Candidate | undefined;
  status: number;
}

/** What every call shares: the gateway's parts, and its bounded model labels. */
export interface GatewayParts {
  keys: KeyResolver;
  meter: ModelCallMeter;
  retry: RetryOptions;
  secrets: SecretBox;
  logger: Logger;
  /** A request's metric labels (see Gateway.attributes). */
  attributes(call: LabelledCall): ModelCallAttributes;
}

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
 * One gateway request: authorize → read → admit → attempt (retries, then
 * fallbacks) → answer → settle → record. Its fields are what the metrics
 * record at the end, filled in as the request gets there.
 */
export class GatewayCall {
  private readonly entered = performance.now();
  private readonly controller = new AbortController();
  private hops = 0;
  private key: GatewayKey | undefined;
  private providers: DbProvider[] = [];
  private body: Record<string, unknown> = {};
  private stream = false;
  private primary: Candidate | undefined;
  private candidates: Candidate[] = [];
  private answeredBy: Candidate | undefined;
  private metered: MeteredCall | undefined;
  private persist: (() => Promise<void>) | undefined;
  /** From the first attempt's start (performance.now()). */
  private started = 0;
  private upstreamMs: number | undefined;
  private usage: Usage | undefined;
  private labels: ModelCallAttributes | undefined;
  private status = 200;
  private settling: Promise<void> | undefined;

  constructor(
    private readonly parts: GatewayParts,
    private readonly ctx: Context,
    private surface: Surface,
    private readonly op: Operation,
  ) {}

  /** `target` reads the asked model and streaming from the body, which is read only once the key is good. */
  async run(target: (ctx: Context) => Target): Promise<void> {
    try {
      this.hops = incomingHops(this.ctx);
      await this.authorize();
      const asked = await this.read(target);
      await this.admit(asked);
      await this.answer();
    } catch (err) {
      // Refused before anything went upstream (authentication, model, limits…).
      if (this.upstreamMs === undefined) this.status = toGatewayError(err).status;
      throw err;
    } finally {
      this.record();
    }
  }

  private async authorize(): Promise<void> {
    const keys = this.parts.keys;
    this.key = await keys.authenticate(presentedSecret(this.ctx, this.surface));
    this.providers = await keys.providers(this.key);
  }

  /** Reads and checks the body; returns the model asked for. */
  private async read(target: (ctx: Context) => Target): Promise<string> {
    await readJsonBody(this.ctx);
    const { asked, stream } = target(this.ctx);
    const body: unknown = this.ctx.request.body;
    if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
    if (this.op === 'chat') this.surface.validateChat?.(body);
    this.body = body;
    this.stream = stream;
    return asked;
  }

  private async admit(asked: string): Promise<void> {
    const key = this.key!;
    // `<provider>/<model>` naming a provider the key does not grant is refused as such, before
    // it could be read as a bare model id of a wildcard grant (and refused for its price instead).
    const prefix = ungrantedPrefix(key, this.providers, asked);
    if (prefix && (await this.parts.keys.providerExists(prefix)))
      throw modelNotGranted(
        `model "${asked}" is not granted to this key: it does not grant provider "${prefix}"`,
      );
    const primary = (this.primary = resolveModel(key, this.providers, asked));
    // A surface with per-request state (the Responses API) renders this request with its own
    // surface and body (earlier turns expanded), and stores its answer with the usage row.
    const scoped = await this.surface.begin?.(key, this.body);
    if (scoped) ({ surface: this.surface, body: this.body, persist: this.persist } = scoped);
    this.candidates = [primary, ...fallbackCandidates(key, this.providers, primary)];
    const body = this.body;
    try {
      this.metered = await this.parts.meter.start(key, {
        provider: {
          id: primary.provider.id,
          name: primary.provider.name,
          type: primary.provider.provider_type,
        },
        model: primary.model,
        operation: this.op,
        stream: this.stream,
        maxOutputTokens: askedOutputLimit(body),
        choices: askedChoices(body),
        sent: body,
        input: body.messages ?? body.contents ?? body.input,
      });
    } catch (err) {
      throw refusalError(err);
    }
  }

  private async answer(): Promise<void> {
    this.started = performance.now();
    const { ctx, controller } = this;
    ctx.res.on('close', () => {
      if (!ctx.res.writableFinished) controller.abort();
    });
    try {
      await (this.stream ? this.answerStream() : this.answerJson());
    } catch (err) {
      if (controller.signal.aborted) {
        // The caller left: nobody to answer, and not a server failure worth an error log.
        void this.settle(undefined, 499, 'client disconnected');
        ctx.status = 499; // nginx's "client closed request", for the request log
        ctx.respond = false;
        return;
      }
      const gerr = toGatewayError(err);
      void this.settle(undefined, gerr.status, gerr.message);
      throw err;
    }
  }

  private async answerJson(): Promise<void> {
    const call = this.op === 'chat' ? chatJson : embedJson;
    const answer = await this.attempt(call);
    const answered = performance.now();
    await this.settle(answer.usage, 200);
    this.setServerTiming(answered);
    this.ctx.body = answer.body;
  }

  private async answerStream(): Promise<void> {
    const opened = await this.attempt(chatStream);
    this.setServerTiming(performance.now());
    const { ctx, surface, body, controller } = this;
    const result = await writeStream(ctx, surface, body, opened, controller, () =>
      this.settle(opened.usage(), 200),
    );
    // A stream that broke (or lost its caller) settles here; one that completed already has.
    void this.settle(opened.usage(), result.status, result.error);
  }

  /** The upstream call, in the model call's span, over the candidates with retries. */
  private async attempt<T>(fn: (ask: UpstreamAsk) => Promise<T>): Promise<T> {
    const { candidates, controller, parts, surface, body, hops } = this;
    const { signal } = controller;
    const one = (c: Candidate) =>
      fn({ surface, target: targetOf(c.provider, parts.secrets, hops), model: c.model, body, signal });
    const r = await context.with(this.metered!.context(), () =>
      withRetriesAndFallbacks(candidates, one, parts.retry, signal),
    );
    this.answeredBy = r.candidate;
    return r.value;
  }

  /**
   * Settles the call once: its span, its usage row and the key's counters.
   * The usage row is written before the answer's last bytes leave (a process
   * killed after answering has stored it); the counters follow without holding it.
   */
  private settle(usage: Usage | undefined, status: number, error?: string): Promise<void> {
    if (this.settling) return this.settling;
    this.status = status;
    this.usage = usage;
    this.upstreamMs = performance.now() - this.started;
    const answeredBy = this.answeredBy;
    if (metrics().enabled) this.labels = this.labelsFor(status);
    const logged = settleInBackground(this.parts.logger, this.metered!, this.labels, {
      status,
      usage,
      responseModel: answeredBy?.model,
      ...(error !== undefined ? { error: new Error(error), errorType: String(status) } : {}),
    });
    const persist = status < 400 ? this.persist : undefined;
    this.settling = persist ? Promise.all([logged, persist()]).then(() => undefined) : logged;
    return this.settling;
  }

  private labelsFor(status: number): ModelCallAttributes {
    const { surface, op, key } = this;
    return this.parts.attributes({ surface, op, key, candidate: this.answeredBy ?? this.primary, status });
  }

  /**
   * `Server-Timing: gateway;dur=…, upstream;dur=…` (milliseconds): the upstream's
   * share is from the first attempt's start to its answer (a stream: to its
   * headers, when ours go out), retries and fallbacks included; the gateway's is
   * everything else so far (authentication, admission, translation, the usage row).
   */
  private setServerTiming(answered: number): void {
    const upstream = answered - this.started;
    const gateway = performance.now() - this.entered - upstream;
    this.ctx.set('Server-Timing', `gateway;dur=${gateway.toFixed(2)}, upstream;dur=${upstream.toFixed(2)}`);
  }

  private record(): void {
    if (!metrics().enabled) return;
    const upstreamMs = this.upstreamMs;
    metrics().gateway.end(
      this.labels ?? this.labelsFor(this.status),
      this.status,
      upstreamMs === undefined ? undefined : upstreamMs / 1000,
      upstreamMs === undefined
        ? undefined
        : Math.max(0, performance.now() - this.entered - upstreamMs) / 1000,
      this.usage,
    );
  }
}

/**
 * Settles a metered call and returns when its usage row is stored. A free
 * function, not a method: the promises it leaves behind (the counters'
 * write, which may take seconds under load) must not hold the call, whose
 * Koa context holds the whole request and response.
 */
function settleInBackground(
  logger: Logger,
  metered: MeteredCall,
  labels: ModelCallAttributes | undefined,
  outcome: Parameters<MeteredCall['settle']>[0],
): Promise<void> {
  const { costUsd, logged, settled } = metered.settle(outcome);
  if (costUsd !== undefined && labels) metrics().gateway.cost(labels, costUsd);
  settled.catch((err: unknown) => logger.error({ err }, 'settling a gateway call failed'));
  // A failed usage write is logged with the settle; the answer goes out regardless.
  return logged.catch(() => undefined);
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
