/**
 * The memory store's embeddings: one call of the project's store embedding
 * model, made as every model call of the project is (core/metering/model-call.ts):
 * admitted and charged on the project's virtual key when it has one, priced
 * and logged in the usage log either way, with its GenAI span. The vendor is
 * reached through the provider adapters' one HTTP client (core/llm/client.ts).
 */
import { context } from '@opentelemetry/api';
import type { SecretBox } from '../crypto/secrets.js';
import type { Db } from '../db/knex.js';
import { embed } from '../llm/client.js';
import { UpstreamError } from '../llm/errors.js';
import { targetOf } from '../llm/provider-target.js';
import { ADAPTERS } from '../llm/providers/index.js';
import type { GatewayPolicyService } from '../metering/gateway-policy.js';
import { ModelCallMeter } from '../metering/model-call.js';
import type { MeteredKey } from '../metering/types.js';
import { ModelsRepository } from '../repositories/models.repository.js';
import { ProvidersRepository } from '../repositories/providers.repository.js';
import { VirtualKeysRepository } from '../repositories/virtual-keys.repository.js';
import { grantsModel, keyExpired } from '../security/virtual-keys.js';
import type { DbProvider } from '../db/tables/index.js';
import type { ProviderFormat } from '../llm/types.js';
import { StoreEmbeddingError } from './errors.js';

export interface EmbedDeps {
  db: Db;
  secrets: SecretBox;
  /** The gateway's metering (the API's `metering`, the worker's `policy`). */
  policy: GatewayPolicyService;
}

/** The project's store embedding setting. */
export interface StoreEmbedding {
  modelId: string;
  dims: number | null;
  fields: string[] | null;
}

/** Who asks, for the call's span: the project, and the agent's session when a memory tool does. */
export interface EmbedCaller {
  projectId: string;
  virtualKeyId: string | null;
  session?: { agentId: string; conversationId: string };
}

/** Whether a provider type has an embeddings endpoint (Anthropic has none). */
export const canEmbed = (type: ProviderFormat): boolean => ADAPTERS[type].toVendorEmbedding !== undefined;

/** The model and its serving provider, or why the store cannot use them. */
async function embeddingTarget(db: Db, modelId: string) {
  const models = new ModelsRepository(db);
  const model = await models.findById(modelId);
  if (!model) throw new StoreEmbeddingError("the project's store embedding model no longer exists");
  const providerId = await models.servingProviderId(model);
  const provider = providerId ? await new ProvidersRepository(db).findById(providerId) : undefined;
  if (!provider)
    throw new StoreEmbeddingError(
      `store embedding model "${model.name}" names no provider and there is not exactly one of its type`,
    );
  if (!canEmbed(provider.provider_type))
    throw new StoreEmbeddingError(`provider type ${provider.provider_type} has no embeddings`);
  return { model, provider };
}

/** The project's key, live and granting the model; undefined when the project has none. */
async function projectKey(
  db: Db,
  keyId: string | null,
  provider: DbProvider,
  model: string,
): Promise<MeteredKey | undefined> {
  if (!keyId) return undefined;
  const keys = new VirtualKeysRepository(db);
  const key = await keys.findLive(keyId);
  if (!key) throw new StoreEmbeddingError("the project's virtual key no longer exists");
  if (keyExpired(key)) throw new StoreEmbeddingError("the project's virtual key has expired");
  const granted = await keys.grantedModels(key.id, provider.id);
  if (!granted || !grantsModel(granted, model))
    throw new StoreEmbeddingError(
      `model "${provider.name}/${model}" is not granted to the project's virtual key`,
    );
  return { id: key.id, rate_limit: key.rate_limit, budget: key.budget };
}

/**
 * Embeds `texts` (one vector each, in order) with the project's store
 * embedding model, metered. Throws StoreEmbeddingError when the setting
 * cannot be called, metering's refusals (core/metering/errors.ts), and the
 * vendor's UpstreamError.
 */
export async function embedTexts(
  deps: EmbedDeps,
  caller: EmbedCaller,
  setting: StoreEmbedding,
  texts: string[],
): Promise<number[][]> {
  const { model, provider } = await embeddingTarget(deps.db, setting.modelId);
  const key = await projectKey(deps.db, caller.virtualKeyId, provider, model.model_id);
  const req = { model: model.model_id, input: texts, ...(setting.dims ? { dimensions: setting.dims } : {}) };
  const call = await new ModelCallMeter(deps.policy).start(key, {
    provider: { id: provider.id, name: provider.name, type: provider.provider_type },
    model: model.model_id,
    operation: 'embed',
    stream: false,
    sent: req,
    input: texts,
    ...(caller.session ? { session: { projectId: caller.projectId, ...caller.session } } : {}),
  });
  try {
    const res = await context.with(call.context(), () => embed(targetOf(provider, deps.secrets), req));
    call.settle({ status: 200, usage: { ...res.usage, output_tokens: 0 }, responseModel: res.model });
    if (res.embeddings.length !== texts.length)
      throw new StoreEmbeddingError(
        `the embedding model returned ${res.embeddings.length} vectors for ${texts.length} texts`,
      );
    return res.embeddings;
  } catch (err) {
    if (err instanceof StoreEmbeddingError) throw err;
    const status = err instanceof UpstreamError ? err.status || 502 : 500;
    call.settle({ status, error: err });
    throw err;
  }
}
