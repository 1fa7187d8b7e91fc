import type { DbProvider } from '../../core/db/tables/index.js';
import { unstorable } from '../http/input-guard.js';
import { invalidRequest, modelNotGranted } from './errors.js';
import { grantsModel, type GatewayKey } from '../../core/security/virtual-keys.js';

/** Where one request goes: a provider and the model id it knows. */
export interface Candidate {
  provider: DbProvider;
  model: string;
}

/**
 * `<provider name>/<model id>` split at the first `/`, or a bare model id when
 * exactly one granted provider offers it (an explicit grant wins over `*`).
 * A prefix that names no granted provider is read as part of a bare id, so
 * ids like `meta-llama/llama-3-8b` work.
 */
export function resolveModel(key: GatewayKey, providers: DbProvider[], asked: string): Candidate {
  if (!asked) throw invalidRequest('model is required');
  // No model id has one, and the price lookup and the usage row (Postgres) could not take it.
  const bad = unstorable(asked);
  if (bad)
    throw invalidRequest(
      `model must not contain ${bad === 'string.nul' ? 'a NUL character' : 'an unpaired surrogate'}`,
    );
  const byId = new Map(providers.map((p) => [p.id, p]));
  const granted = key.grants.flatMap((g) => {
    const provider = byId.get(g.provider_id);
    return provider ? [{ provider, grant: g }] : [];
  });
  const slash = asked.indexOf('/');
  if (slash > 0) {
    const name = asked.slice(0, slash);
    const model = asked.slice(slash + 1);
    const match = granted.find((g) => g.provider.name === name);
    if (match) {
      if (!grantsModel(match.grant.model_names, model))
        throw modelNotGranted(`model "${asked}" is not granted to this key`);
      return { provider: match.provider, model };
    }
  }
  const explicit = granted.filter((g) => g.grant.model_names.includes(asked));
  const candidates =
    explicit.length > 0 ? explicit : granted.filter((g) => g.grant.model_names.includes('*'));
  if (candidates.length === 1) return { provider: candidates[0]!.provider, model: asked };
  if (candidates.length === 0) {
    const what = slash > 0 ? `provider "${asked.slice(0, slash)}" or model "${asked}"` : `model "${asked}"`;
    throw modelNotGranted(`${what} is not granted to this key`);
  }
  const names = candidates.map((c) => `${c.provider.name}/${asked}`).join(', ');
  throw invalidRequest(`model "${asked}" is ambiguous for this key; name one of: ${names}`);
}

/**
 * The `<provider>/` prefix of the model asked for when it names no provider
 * the key grants (resolveModel then reads it as part of a bare model id); the
 * caller asks whether a provider of that name exists, which the key does not
 * grant.
 */
export function ungrantedPrefix(key: GatewayKey, providers: DbProvider[], asked: string): string | undefined {
  const slash = asked.indexOf('/');
  if (slash <= 0) return undefined;
  const name = asked.slice(0, slash);
  const granted = new Set(key.grants.map((g) => g.provider_id));
  return providers.some((p) => p.name === name && granted.has(p.id)) ? undefined : name;
}

/** The key's fallbacks (`<provider>/<model>`), after the primary, skipping any equal to it. */
export function fallbackCandidates(
  key: GatewayKey,
  providers: DbProvider[],
  primary: Candidate,
): Candidate[] {
  return key.fallbacks.flatMap((f) => {
    const slash = f.indexOf('/');
    const provider = providers.find((p) => p.name === f.slice(0, slash));
    const model = f.slice(slash + 1);
    if (!provider || (provider.id === primary.provider.id && model === primary.model)) return [];
    return [{ provider, model }];
  });
}

/** `GET /models`: exactly the explicit grants, and `<provider>/*` for a wildcard grant. */
export function grantedModelNames(
  key: GatewayKey,
  providers: DbProvider[],
): Array<{ id: string; owned_by: string }> {
  const byId = new Map(providers.map((p) => [p.id, p]));
  return key.grants.flatMap((g) => {
    const p = byId.get(g.provider_id);
    return p ? g.model_names.map((m) => ({ id: `${p.name}/${m}`, owned_by: p.name })) : [];
  });
}
