/**
 * OAuth 2 for remote A2A agents, as MCP servers have it (core/mcp/oauth):
 * the same provider, tables, callback and durable authorization pause. What
 * differs is where the authorization server is learnt: not by discovery from
 * the protected resource but from the agent card's `securitySchemes` — an
 * `oauth2` scheme with an `authorizationCode` or `clientCredentials` flow,
 * and its RFC 8414 metadata when the scheme names `oauth2MetadataUrl`.
 */
import type { AgentCard } from '@a2a-js/sdk';
import {
  auth,
  type AuthorizationServerMetadata,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';
import type { DbA2aAgent, DbMcpOAuthFlow } from '../db/tables/index.js';
import {
  grantOf,
  McpOAuthProvider,
  oauthConfigOf,
  type McpOAuthConfig,
  type McpOAuthDeps,
} from '../mcp/oauth/index.js';
import { oauthFetch } from '../mcp/oauth/oauth-fetch.js';
import { McpOAuthRepository } from '../repositories/mcp-oauth.repository.js';

/** A flow of an `oauth2` scheme on the card, as we use it. */
export interface A2aOAuthScheme {
  name: string;
  grant: 'authorization_code' | 'client_credentials';
  authorizationUrl?: string;
  tokenUrl: string;
  scopes: string[];
  /** RFC 8414 metadata of the authorization server, when the card names it. */
  metadataUrl?: string;
}

/** The remote wants an authorization a person gives: they open the URL. */
export class A2aAuthorizationRequired extends Error {
  override name = 'A2aAuthorizationRequired';
  constructor(
    readonly a2aAgentId: string,
    readonly endUserId: string | null,
    readonly authorizationUrl: string,
  ) {
    super('the A2A agent needs authorization');
  }
}

/** OAuth cannot work with this agent as registered (no fitting flow on its card, refused scope…): said to the caller. */
export class A2aOAuthUnavailable extends Error {
  override name = 'A2aOAuthUnavailable';
}

/** A token stays usable until this close to its expiry. */
const EXPIRY_MARGIN_MS = 30_000;

/** Every `oauth2` scheme's authorization-code and client-credentials flows on the card. */
export function cardOAuthSchemes(card: AgentCard): A2aOAuthScheme[] {
  const found: A2aOAuthScheme[] = [];
  for (const [name, scheme] of Object.entries(card.securitySchemes ?? {})) {
    if (scheme.scheme?.$case !== 'oauth2SecurityScheme') continue;
    const { flows, oauth2MetadataUrl } = scheme.scheme.value;
    const flow = flows?.flow;
    const metadataUrl = oauth2MetadataUrl ? { metadataUrl: oauth2MetadataUrl } : {};
    if (flow?.$case === 'authorizationCode')
      found.push({
        name,
        grant: 'authorization_code',
        authorizationUrl: flow.value.authorizationUrl,
        tokenUrl: flow.value.tokenUrl,
        scopes: Object.keys(flow.value.scopes ?? {}),
        ...metadataUrl,
      });
    else if (flow?.$case === 'clientCredentials')
      found.push({
        name,
        grant: 'client_credentials',
        tokenUrl: flow.value.tokenUrl,
        scopes: Object.keys(flow.value.scopes ?? {}),
        ...metadataUrl,
      });
  }
  return found;
}

/**
 * Whether calls to this agent use OAuth: when it has OAuth settings, or when
 * none of its own headers are set and its card offers an OAuth 2 flow.
 */
export function usesOAuth(row: Pick<DbA2aAgent, 'oauth_enc' | 'headers_enc'>, card: AgentCard): boolean {
  if (row.oauth_enc) return true;
  return !row.headers_enc && cardOAuthSchemes(card).length > 0;
}

/** The card's scheme for the grant the settings choose; A2aOAuthUnavailable when the card has none. */
export function schemeFor(card: AgentCard, config: McpOAuthConfig | null): A2aOAuthScheme {
  const grant = grantOf(config);
  const scheme = cardOAuthSchemes(card).find((s) => s.grant === grant);
  if (!scheme)
    throw new A2aOAuthUnavailable(
      `the agent card offers no OAuth 2 ${grant === 'client_credentials' ? 'clientCredentials' : 'authorizationCode'} flow`,
    );
  return scheme;
}

/**
 * What the SDK's authorization needs to know of the authorization server:
 * the RFC 8414 document the card points to, else what the flow itself says.
 * The card is the trust anchor then, so no issuer is assumed (and none is
 * checked in the callback).
 */
export async function discoveryFor(scheme: A2aOAuthScheme): Promise<OAuthDiscoveryState> {
  if (scheme.metadataUrl) {
    const res = await oauthFetch(scheme.metadataUrl, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok)
      throw new A2aOAuthUnavailable(
        `the authorization server metadata named by the agent card answered HTTP ${res.status}`,
      );
    const metadata = (await res.json()) as AuthorizationServerMetadata;
    return {
      authorizationServerUrl: metadata.issuer ?? new URL(scheme.tokenUrl).origin,
      authorizationServerMetadata: metadata,
    };
  }
  const origin = new URL(scheme.tokenUrl).origin;
  const metadata = {
    authorization_endpoint: scheme.authorizationUrl ?? `${origin}/authorize`,
    token_endpoint: scheme.tokenUrl,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    grant_types_supported: [scheme.grant, 'refresh_token'],
    ...(scheme.scopes.length ? { scopes_supported: scheme.scopes } : {}),
  } as unknown as AuthorizationServerMetadata;
  return { authorizationServerUrl: origin, authorizationServerMetadata: metadata };
}

/** The credentials' owner: the end user's own only when the agent keeps tokens per user. */
const ownerOf = (row: DbA2aAgent, endUserId: string | null | undefined): string =>
  row.per_user_tokens ? (endUserId ?? '') : '';

/** The provider (and its tables) for a remote agent and an end user. */
export function a2aOAuthProvider(
  deps: McpOAuthDeps,
  row: DbA2aAgent,
  endUserId: string | null | undefined,
  flow?: DbMcpOAuthFlow,
): McpOAuthProvider {
  return new McpOAuthProvider(
    deps,
    { id: row.id, endpoint: row.card_url, owner: 'a2a_agent_id' },
    flow ? flow.end_user_id : ownerOf(row, endUserId),
    oauthConfigOf(deps, row),
    flow,
  );
}

/**
 * Runs the SDK's authorization for the agent: "authorized" when a token came
 * without anyone (client credentials, a refresh), else the URL a person
 * opens. `fresh`: asked for by a person, so earlier completed attempts no
 * longer count against the limit.
 */
export async function authorizeA2a(
  deps: McpOAuthDeps,
  row: DbA2aAgent,
  card: AgentCard,
  endUserId: string | null | undefined,
  opts: { fresh?: boolean } = {},
): Promise<{ status: 'authorized' } | { authorization_url: string }> {
  const config = oauthConfigOf(deps, row);
  const scheme = schemeFor(card, config);
  const provider = a2aOAuthProvider(deps, row, endUserId);
  if (opts.fresh)
    await new McpOAuthRepository(deps.db, 'a2a_agent_id').forgetCompletedFlows(row.id, provider.endUserId);
  await provider.saveDiscoveryState(await discoveryFor(scheme));
  const scopes = config?.scopes?.length ? config.scopes : scheme.scopes;
  const result = await auth(provider, {
    serverUrl: row.card_url,
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
    fetchFn: oauthFetch,
  });
  if (result === 'AUTHORIZED') return { status: 'authorized' };
  if (provider.authorizationUrl) return { authorization_url: provider.authorizationUrl.href };
  throw new A2aOAuthUnavailable(
    provider.refusedScope !== undefined
      ? 'the A2A agent kept refusing the authorization given: no new one is asked for until a person authorizes again'
      : 'the authorization server gave no way to authorize',
  );
}

/**
 * The bearer token for a call: the stored one while it is good, else one
 * obtained now (client credentials, a refresh). A2aAuthorizationRequired
 * when a person must authorize first.
 */
export async function a2aBearer(
  deps: McpOAuthDeps,
  row: DbA2aAgent,
  card: AgentCard,
  endUserId: string | null,
): Promise<string> {
  const owner = ownerOf(row, endUserId);
  const repo = new McpOAuthRepository(deps.db, 'a2a_agent_id');
  const stored = await repo.credentials(row.id, owner);
  const usable =
    stored?.tokens_enc && (!stored.expires_at || stored.expires_at.getTime() > Date.now() + EXPIRY_MARGIN_MS);
  if (!usable) {
    const outcome = await authorizeA2a(deps, row, card, endUserId);
    if ('authorization_url' in outcome)
      throw new A2aAuthorizationRequired(
        row.id,
        row.per_user_tokens ? owner : null,
        outcome.authorization_url,
      );
  }
  const creds = usable ? stored : await repo.credentials(row.id, owner);
  const tokens = creds?.tokens_enc
    ? deps.secrets.decryptJson<{ access_token?: string }>(creds.tokens_enc)
    : undefined;
  if (!tokens?.access_token) throw new A2aOAuthUnavailable('the authorization server gave no access token');
  return tokens.access_token;
}

/** The remote refused the token (401): it is spent, so the next call refreshes or asks anew. */
export async function markTokenRefused(
  deps: Pick<McpOAuthDeps, 'db'>,
  row: DbA2aAgent,
  endUserId: string | null,
) {
  await new McpOAuthRepository(deps.db, 'a2a_agent_id').saveCredentials(row.id, ownerOf(row, endUserId), {
    expires_at: new Date(0),
  });
}
