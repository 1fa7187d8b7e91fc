import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { ModelCallMeter } from '../../core/metering/model-call.js';
import { metrics } from '../../core/telemetry/metrics.js';
import type { ModelCallAttributes } from '../../core/telemetry/metrics/genai.js';
import {
  GatewayCall,
  presentedSecret,
  type GatewayParts,
  type LabelledCall,
  type Operation,
  type Target,
} from './gateway-call.js';
import type { KeyResolver } from './keys.js';
import { grantedModelNames } from './models.js';
import type { Surface } from './surface.js';
import { DEFAULT_RETRY, type RetryOptions } from './upstream.js';

export type { Operation, Target } from './gateway-call.js';

export interface GatewayOptions {
  retry?: RetryOptions;
}

/**
 * The vendor-compatible surfaces' request pipeline (GatewayCall, one per
 * request) and what its calls share: the key cache, metering, retries, and
 * the model labels its metrics may use.
 */
export class Gateway implements GatewayParts {
  readonly keys: KeyResolver;
  readonly meter: ModelCallMeter;
  readonly retry: RetryOptions;
  readonly secrets: AppDeps['secrets'];
  readonly logger: AppDeps['logger'];
  /** Models an upstream has answered for, by provider id: model labels (see `attributes`). */
  private readonly answeredModels = new Map<string, Set<string>>();
  private answeredCount = 0;

  constructor(
    private readonly deps: AppDeps,
    opts: GatewayOptions = {},
  ) {
    this.keys = deps.gatewayKeys;
    this.meter = new ModelCallMeter(deps.metering, true);
    this.retry = opts.retry ?? DEFAULT_RETRY;
    this.secrets = deps.secrets;
    this.logger = deps.logger;
  }

  async listModels(ctx: Context, surface: Surface): Promise<void> {
    const key = await this.keys.authenticate(presentedSecret(ctx, surface));
    const providers = await this.keys.providers(key);
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
  handle(ctx: Context, surface: Surface, op: Operation, target: (ctx: Context) => Target): Promise<void> {
    return new GatewayCall(this, ctx, surface, op).run(target);
  }

  /**
   * The request's labels. The model is caller text under a wildcard grant, so
   * it is a label only when configuration names it (a grant or a fallback)
   * or an upstream has answered for it in this process (vendors' catalogs are
   * bounded); otherwise `_OTHER`.
   */
  attributes({ surface, op, key, candidate: c, status }: LabelledCall): ModelCallAttributes {
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
}
