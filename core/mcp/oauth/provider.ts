import { createHash, randomBytes } from 'node:crypto';
import {
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  SdkErrorCode,
  SdkHttpError,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import type { SecretBox } from '../../crypto/secrets.js';
import type { Db } from '../../db/knex.js';
import type {
  DbMcpOAuthCredentials,
  DbMcpOAuthFlow,
  McpOAuthDiscovery,
  OAuthOwnerColumn,
} from '../../db/tables/index.js';
import { McpOAuthRepository } from '../../repositories/mcp-oauth.repository.js';
import { oauthFetch } from './oauth-fetch.js';
import { grantOf, type McpOAuthConfig } from './config.js';
import { clientMetadataFor, oauthCallbackUrl, usableClientMetadataUrl } from './urls.js';

export interface McpOAuthDeps {
  db: Db;
  secrets: SecretBox;
  /** The API's public base URL (PUBLIC_URL): the callback and the client metadata document live under it. */
  publicUrl: string;
}

/** Authorizations completed for the same scope, the server still refusing it, before we stop asking. */
export const MAX_AUTHORIZATION_ATTEMPTS = 3;

type StoredTokens = OAuthTokens & { issuer?: string };

/** Stored credentials stamped with another authorization server than the one now in use. */
function boundElsewhere(
  stored: { issuer?: string } | undefined,
  ctx?: OAuthClientInformationContext,
): boolean {
  return Boolean(stored?.issuer && ctx?.issuer && stored.issuer !== ctx.issuer);
}

export const hashState = (state: string): string => createHash('sha256').update(state).digest('hex');

/**
 * The SDK's OAuthClientProvider for one MCP server and one end user ('' is
 * the project's own), backed by mcp_oauth_credentials and mcp_oauth_flows.
 * Secrets are stored encrypted. `redirectToAuthorization` does not go
 * anywhere: it records the flow and keeps the URL for a person to open
 * (`authorizationUrl`). A server with `grant: client_credentials` gets its
 * tokens without anyone (no redirect URL, so the SDK asks the token endpoint).
 */
export class McpOAuthProvider implements OAuthClientProvider {
  /** The URL a person must open, once the SDK asked for one. */
  authorizationUrl: URL | undefined;
  /** Set (to the scope asked for) when the server kept refusing what was granted: we stopped asking. */
  refusedScope: string | null | undefined;
  private readonly repo: McpOAuthRepository;
  private stored: Promise<DbMcpOAuthCredentials | undefined> | undefined;
  private pendingState: string | undefined;
  private pendingVerifier: string | undefined;
  /** The server said insufficient_scope: a refresh would bring the same scopes, so it is not offered. */
  private steppingUp = false;
  /** A token was offered to the server (so its acceptance ends a sequence of authorizations). */
  private offeredToken = false;
  /** Every secret handed to the SDK, so that none comes back out in an error message. */
  private readonly handedOut = new Set<string>();
  /** The last 401 the server answered (what it said, and its challenge's metadata URL). */
  private lastRefusal:
    { text: string; resourceMetadataUrl: URL | undefined; refusedToken: boolean } | undefined;
  /** Discovery was done again in this connection (after a token was refused). */
  private rediscovered = false;
  private fetchFn: typeof fetch = oauthFetch;

  constructor(
    private readonly deps: McpOAuthDeps,
    /** `owner`: whose credentials these are (an MCP server's unless said otherwise). */
    readonly server: { id: string; endpoint: string; owner?: OAuthOwnerColumn },
    readonly endUserId: string,
    private readonly config: McpOAuthConfig | null,
    /** The flow a callback completes: its verifier and redirect URI are the ones to use. */
    private readonly flow?: DbMcpOAuthFlow,
  ) {
    this.repo = new McpOAuthRepository(deps.db, server.owner);
  }

  get grant(): 'authorization_code' | 'client_credentials' {
    return grantOf(this.config);
  }

  get redirectUrl(): string | undefined {
    if (this.grant === 'client_credentials') return undefined;
    return this.flow?.redirect_uri ?? oauthCallbackUrl(this.deps.publicUrl);
  }

  get clientMetadataUrl(): string | undefined {
    if (this.grant === 'client_credentials' || this.config?.client_id) return undefined;
    return usableClientMetadataUrl(this.deps.publicUrl);
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.config?.scopes?.join(' ') || undefined;
    const base = clientMetadataFor(this.deps.publicUrl, scope);
    const method = this.config?.token_endpoint_auth_method;
    if (this.grant === 'client_credentials')
      return { ...base, redirect_uris: [], grant_types: ['client_credentials'], response_types: [] };
    return method ? { ...base, token_endpoint_auth_method: method } : base;
  }

  private row(): Promise<DbMcpOAuthCredentials | undefined> {
    this.stored ??= this.repo.credentials(this.serverId, this.endUserId);
    return this.stored;
  }

  private async save(patch: Parameters<McpOAuthRepository['saveCredentials']>[2]): Promise<void> {
    await this.repo.saveCredentials(this.serverId, this.endUserId, patch);
    this.stored = undefined;
  }

  private open<T>(value: string | null | undefined): T | undefined {
    return value ? this.deps.secrets.decryptJson<T>(value) : undefined;
  }

  state(): string {
    this.pendingState = randomBytes(32).toString('base64url');
    return this.pendingState;
  }

  /**
   * The client registered with the authorization server `ctx.issuer` names;
   * one registered with another (the server moved to a new authorization
   * server) is not offered, so the SDK registers anew.
   */
  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<OAuthClientInformationMixed | undefined> {
    const stored = this.open<OAuthClientInformationMixed & { issuer?: string }>(
      (await this.row())?.client_info_enc,
    );
    const saved = boundElsewhere(stored, ctx) ? undefined : stored;
    const preset = this.config;
    this.remember(saved?.client_secret, preset?.client_secret);
    if (!preset?.client_id) return saved;
    // The pre-registered client always wins; the issuer it was first used with is kept.
    return {
      client_id: preset.client_id,
      ...(preset.client_secret ? { client_secret: preset.client_secret } : {}),
      ...(preset.token_endpoint_auth_method && preset.token_endpoint_auth_method !== 'private_key_jwt'
        ? { token_endpoint_auth_method: preset.token_endpoint_auth_method }
        : {}),
      ...(saved?.client_id === preset.client_id && saved.issuer ? { issuer: saved.issuer } : {}),
    };
  }

  async saveClientInformation(
    info: OAuthClientInformationMixed,
    ctx?: OAuthClientInformationContext,
  ): Promise<void> {
    const stamped = ctx?.issuer ? { ...info, issuer: ctx.issuer } : info;
    await this.save({ client_info_enc: this.deps.secrets.encryptJson(stamped) });
  }

  /** The tokens (the last saved when no issuer is named); none when they came from another authorization server. */
  async tokens(ctx?: OAuthClientInformationContext): Promise<OAuthTokens | undefined> {
    const row = await this.row();
    const tokens = this.open<StoredTokens>(row?.tokens_enc);
    if (!tokens || boundElsewhere(tokens, ctx)) return undefined;
    const expired = row?.expires_at ? row.expires_at.getTime() <= Date.now() : false;
    // An expired client_credentials token is simply fetched again: nobody is waiting on a person.
    if (expired && this.grant === 'client_credentials') return undefined;
    this.offeredToken = true;
    this.remember(tokens.access_token, tokens.refresh_token);
    if (this.steppingUp) {
      const { refresh_token: _refresh, ...rest } = tokens;
      return rest;
    }
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    this.remember(tokens.access_token, tokens.refresh_token);
    const expiresAt = tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000) : null;
    const previous = this.open<StoredTokens>((await this.row())?.tokens_enc);
    // A refresh answer may leave the refresh token out: the one we had stays good (RFC 6749 §6).
    const kept =
      previous?.refresh_token && !tokens.refresh_token && !boundElsewhere(previous, ctx)
        ? { ...tokens, refresh_token: previous.refresh_token }
        : tokens;
    const merged = ctx?.issuer ? { ...kept, issuer: ctx.issuer } : kept;
    await this.save({
      tokens_enc: this.deps.secrets.encryptJson(merged),
      scopes: tokens.scope ?? this.flow?.scope ?? this.config?.scopes?.join(' ') ?? null,
      expires_at: expiresAt,
    });
  }

  /** client_credentials asks the token endpoint directly; otherwise the SDK's authorization_code exchange. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.pendingVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.flow) return this.deps.secrets.decrypt(this.flow.code_verifier_enc);
    if (this.pendingVerifier) return this.pendingVerifier;
    throw new Error('no authorization is under way for this MCP server');
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const scope = url.searchParams.get('scope');
    const state = url.searchParams.get('state') ?? this.pendingState;
    if (!state || !this.pendingVerifier) throw new Error('the authorization request has no state');
    const attempts = await this.repo.completedAttempts(this.serverId, this.endUserId, scope);
    if (attempts >= MAX_AUTHORIZATION_ATTEMPTS) {
      this.refusedScope = scope;
      return;
    }
    await this.repo.insertFlow(this.serverId, {
      state_hash: hashState(state),
      end_user_id: this.endUserId,
      code_verifier_enc: this.deps.secrets.encrypt(this.pendingVerifier),
      redirect_uri: this.redirectUrl ?? oauthCallbackUrl(this.deps.publicUrl),
      scope,
    });
    this.authorizationUrl = url;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.pendingVerifier = undefined;
      return;
    }
    const all = scope === 'all';
    await this.save({
      ...(all || scope === 'client' ? { client_info_enc: null } : {}),
      ...(all || scope === 'tokens' ? { tokens_enc: null, expires_at: null, scopes: null } : {}),
      ...(all || scope === 'discovery' ? { discovery: null } : {}),
    });
  }

  get serverId(): string {
    return this.server.id;
  }

  /**
   * What discovery found before; else, after a 401, discovery now: a server
   * that publishes neither protected-resource nor authorization-server
   * metadata does not use OAuth, and its 401 is reported as it was (no
   * registration is attempted at made-up endpoints).
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const cached = (await this.row())?.discovery as OAuthDiscoveryState | null | undefined;
    // A refused token may mean the server moved to another authorization server: look again, once.
    const stale = this.lastRefusal?.refusedToken === true && !this.rediscovered;
    if ((cached && !stale) || !this.lastRefusal) return cached ?? undefined;
    const refusal = this.lastRefusal;
    this.rediscovered = true;
    const found = await discoverOAuthServerInfo(this.server.endpoint, {
      ...(refusal.resourceMetadataUrl ? { resourceMetadataUrl: refusal.resourceMetadataUrl } : {}),
      fetchFn: this.fetchFn,
    });
    if (!found.resourceMetadata && !found.authorizationServerMetadata && !this.config)
      throw new SdkHttpError(
        SdkErrorCode.ClientHttpAuthentication,
        `Error POSTing to endpoint: ${refusal.text}`,
        {
          status: 401,
        },
      );
    const state: OAuthDiscoveryState = {
      ...found,
      ...(refusal.resourceMetadataUrl ? { resourceMetadataUrl: refusal.resourceMetadataUrl.href } : {}),
    };
    await this.saveDiscoveryState(state);
    return state;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.save({ discovery: JSON.parse(JSON.stringify(state)) as McpOAuthDiscovery });
  }

  /**
   * The fetch the transport uses: a 403 insufficient_scope makes the next
   * authorization a new one (for the wider scope) rather than a refresh.
   */
  wrapFetch(fetchFn: typeof fetch): typeof fetch {
    this.fetchFn = fetchFn;
    return async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetchFn(input, init);
      if (res.status === 403 && /insufficient_scope/.test(res.headers.get('www-authenticate') ?? ''))
        this.steppingUp = true;
      if (res.status === 401) {
        const text = await res
          .clone()
          .text()
          .catch(() => '');
        this.lastRefusal = {
          text,
          resourceMetadataUrl: extractWWWAuthenticateParams(res).resourceMetadataUrl,
          refusedToken: this.offeredToken,
        };
      }
      return res;
    };
  }

  private remember(...values: Array<string | undefined>): void {
    for (const v of values) if (v && v.length >= 4) this.handedOut.add(v);
  }

  /** The tokens and client secret this provider handed to the SDK so far (to scrub from messages). */
  secrets(): string[] {
    return [...this.handedOut];
  }

  /** The server accepted a request: a sequence of authorizations, if any, ended well. */
  async accepted(): Promise<void> {
    if (this.offeredToken) await this.repo.forgetCompletedFlows(this.serverId, this.endUserId);
  }
}
