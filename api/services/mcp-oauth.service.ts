import {
  auth,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  IssuerMismatchError,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';
import type { SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { DbMcpOAuthCredentials, DbMcpServer } from '../../core/db/tables/index.js';
import {
  AppError,
  BadGatewayError,
  ConflictError,
  STATUS_MESSAGES,
  ValidationError,
} from '../../core/errors.js';
import { connectionSecrets, describeFailure } from '../../core/mcp/mcp-client.js';
import {
  hashState,
  mcpOAuthProvider,
  oauthConfigOf,
  type McpOAuthConfig,
  type McpOAuthProvider,
} from '../../core/mcp/oauth/index.js';
import { a2aOAuthProvider } from '../../core/a2a/oauth.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';
import { McpOAuthRepository } from '../../core/repositories/mcp-oauth.repository.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import { egressFetch } from '../../core/security/egress-agent.js';
import { oauthFetch } from '../../core/mcp/oauth/oauth-fetch.js';
import { EgressDeniedError, findEgressDenial } from '../../core/security/egress-policy.js';
import { redactUrl } from '../../core/security/redact.js';
import { assertInProject } from './project-scope.js';

export type AuthorizeResult = { authorization_url: string } | { status: 'authorized' };

/** What the callback page says, and with which status. */
export interface CallbackOutcome {
  status: number;
  title: string;
  message: string;
  /** Set when tokens were stored: the runs waiting on this server and end user can go on. */
  authorized?: { serverId: string; endUserId: string | null };
}

/** A JSON-RPC initialize, sent without credentials to read the server's challenge. */
const PROBE_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'agent-server', version: '0.1.0' },
  },
});

const refused = (title: string, message: string, status = 400): CallbackOutcome => ({
  status,
  title,
  message,
});

/**
 * OAuth for MCP servers: starting an authorization (or getting a token
 * without anyone), forgetting one, and completing one at the callback.
 * Tokens, secrets, codes and verifiers never leave it: answers carry URLs
 * and statuses, errors are scrubbed.
 */
export class McpOAuthService {
  private readonly servers: McpServersRepository;
  private readonly oauth: McpOAuthRepository;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly publicUrl: string,
  ) {
    this.servers = new McpServersRepository(db);
    this.oauth = new McpOAuthRepository(db);
  }

  private get deps() {
    return { db: this.db, secrets: this.secrets, publicUrl: this.publicUrl };
  }

  private async server(id: string, projectId: string | undefined): Promise<DbMcpServer> {
    const row = await this.servers.findById(id);
    assertInProject(row, projectId, 'mcp server');
    return row!;
  }

  private owner(row: DbMcpServer, endUserId: string | undefined, field: string): string {
    if (endUserId !== undefined && !row.per_user_tokens)
      throw ValidationError.field(
        field,
        'this MCP server keeps one authorization for the project: set per_user_tokens to authorize end users one by one',
      );
    return endUserId ?? '';
  }

  /**
   * Runs the SDK's authorization with our provider: a URL for a person to
   * open, or "authorized" when a token came without anyone (client
   * credentials, or a refresh). 409 when the server does not use OAuth,
   * 502 when discovery or the authorization server fails.
   */
  async authorize(id: string, projectId: string | undefined, endUserId?: string): Promise<AuthorizeResult> {
    const row = await this.server(id, projectId);
    const owner = this.owner(row, endUserId, 'end_user_id');
    const provider = mcpOAuthProvider(this.deps, row, owner);
    // Asked for by a person: a new sequence of attempts starts.
    await this.oauth.forgetCompletedFlows(row.id, owner);
    const challenge = await this.challenge(row);
    const discovery = await this.discover(row, challenge.resourceMetadataUrl);
    await provider.saveDiscoveryState(discovery);
    // What the server asks for, else the scopes configured, else (in the SDK) what its metadata lists.
    const scope =
      challenge.scope ?? (oauthConfigOf({ secrets: this.secrets }, row)?.scopes?.join(' ') || undefined);
    try {
      const result = await auth(provider, {
        serverUrl: row.endpoint,
        ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
        ...(scope ? { scope } : {}),
        fetchFn: oauthFetch,
      });
      if (result === 'AUTHORIZED') return { status: 'authorized' };
      if (provider.authorizationUrl) return { authorization_url: provider.authorizationUrl.href };
      throw new BadGatewayError({ reason: 'the authorization server gave no way to authorize' });
    } catch (err) {
      throw this.failure(err, row, provider);
    }
  }

  /** The server's WWW-Authenticate challenge to a request without credentials (best effort). */
  private async challenge(row: DbMcpServer): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    const headers = row.headers_enc ? this.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
    try {
      const res = await egressFetch(row.endpoint, {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: PROBE_BODY,
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status !== 401 && res.status !== 403) return {};
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
      return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
    } catch (err) {
      const denied = findEgressDenial(err);
      if (denied) throw new AppError(403, STATUS_MESSAGES[403]!, { reason: denied.message });
      return {};
    }
  }

  private async discover(
    row: DbMcpServer,
    resourceMetadataUrl: URL | undefined,
  ): Promise<OAuthDiscoveryState> {
    let found;
    try {
      found = await discoverOAuthServerInfo(row.endpoint, {
        ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
        fetchFn: oauthFetch,
      });
    } catch (err) {
      throw this.failure(err, row);
    }
    if (!found.resourceMetadata && !found.authorizationServerMetadata)
      throw new ConflictError({
        reason:
          'the MCP server does not use OAuth: it publishes no protected resource metadata (RFC 9728) and no ' +
          'authorization server metadata (RFC 8414) was found',
      });
    return { ...found, ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}) };
  }

  private failure(err: unknown, row: DbMcpServer, provider?: McpOAuthProvider): Error {
    if (err instanceof AppError) return err;
    const denied = findEgressDenial(err);
    if (denied || err instanceof EgressDeniedError)
      return new AppError(403, STATUS_MESSAGES[403]!, { reason: (denied ?? (err as Error)).message });
    const secrets = [
      ...connectionSecrets({ endpoint: row.endpoint, headers: {}, auth: provider }),
      ...this.configSecrets(row),
    ];
    return new BadGatewayError({
      reason: `authorization with the MCP server at ${redactUrl(row.endpoint)} failed: ${describeFailure(err, secrets)}`,
    });
  }

  private configSecrets(row: DbMcpServer): string[] {
    const secret = oauthConfigOf({ secrets: this.secrets }, row)?.client_secret;
    return secret ? [secret] : [];
  }

  /** Revokes the tokens at the authorization server when it offers revocation (best effort), then forgets them. */
  async deauthorize(id: string, projectId: string | undefined, endUserId?: string): Promise<void> {
    const row = await this.server(id, projectId);
    const owner = this.owner(row, endUserId, 'end_user_id');
    const creds = await this.oauth.credentials(row.id, owner);
    if (creds) await this.revoke(creds, oauthConfigOf({ secrets: this.secrets }, row)).catch(() => undefined);
    await this.oauth.deleteCredentials(row.id, owner);
  }

  /** Revokes the credentials' tokens where the authorization server offers revocation (RFC 7009). */
  async revoke(creds: DbMcpOAuthCredentials, config: McpOAuthConfig | null): Promise<void> {
    const endpoint = creds.discovery?.authorizationServerMetadata?.revocation_endpoint;
    if (typeof endpoint !== 'string' || !creds.tokens_enc) return;
    const tokens = this.secrets.decryptJson<{ access_token?: string; refresh_token?: string }>(
      creds.tokens_enc,
    );
    const client = creds.client_info_enc
      ? this.secrets.decryptJson<{ client_id?: string; client_secret?: string }>(creds.client_info_enc)
      : {};
    const clientId = config?.client_id ?? client.client_id;
    const clientSecret = config?.client_id ? config.client_secret : client.client_secret;
    const basic = clientSecret && config?.token_endpoint_auth_method !== 'client_secret_post';
    for (const [token, hint] of [
      [tokens.refresh_token, 'refresh_token'],
      [tokens.access_token, 'access_token'],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint });
      if (!basic && clientId) body.set('client_id', clientId);
      if (!basic && clientSecret) body.set('client_secret', clientSecret);
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (basic && clientId)
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
      const res = await egressFetch(endpoint, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(5_000),
      });
      await res.body?.cancel().catch(() => undefined);
    }
  }

  /**
   * The authorization server sent a person back. The flow is found by the
   * hash of `state` and claimed once; `iss` (RFC 9207) must name the
   * authorization server we sent them to; the code is exchanged with the
   * flow's PKCE verifier.
   */
  async callback(q: {
    code?: string;
    state?: string;
    iss?: string;
    error?: string;
  }): Promise<CallbackOutcome> {
    if (!q.state)
      return refused('Authorization failed', 'The request has no state: start the authorization again.');
    const flow = await this.oauth.claimFlow(hashState(q.state));
    if (!flow)
      return refused(
        'Authorization failed',
        'This authorization link is unknown, already used or expired: start the authorization again.',
      );
    if (q.error)
      return refused('Authorization refused', `The authorization server answered: ${q.error.slice(0, 100)}.`);
    if (!q.code) return refused('Authorization failed', 'The authorization server sent no code.');
    const owner = flow.a2a_agent_id
      ? await new A2aAgentsRepository(this.db).findById(flow.a2a_agent_id)
      : await this.servers.findById(flow.server_id!);
    if (!owner)
      return refused(
        'Authorization failed',
        flow.a2a_agent_id ? 'The A2A agent no longer exists.' : 'The MCP server no longer exists.',
      );
    const provider =
      'card_url' in owner
        ? a2aOAuthProvider(this.deps, owner, null, flow)
        : mcpOAuthProvider(this.deps, owner, flow.end_user_id, flow);
    const serverUrl = 'card_url' in owner ? owner.card_url : owner.endpoint;
    try {
      // `iss` (RFC 9207) is checked by the SDK against the metadata's issuer, normalised; required
      // when the metadata advertises authorization_response_iss_parameter_supported.
      await auth(provider, {
        serverUrl,
        authorizationCode: q.code,
        ...(q.iss !== undefined ? { iss: q.iss } : {}),
        fetchFn: oauthFetch,
      });
    } catch (err) {
      if (err instanceof IssuerMismatchError)
        return refused(
          'Authorization failed',
          'The answer does not come from the authorization server this authorization was started with (iss).',
        );
      const secrets = [q.code, ...connectionSecrets({ endpoint: serverUrl, headers: {}, auth: provider })];
      return refused(
        'Authorization failed',
        `The authorization server did not give a token: ${describeFailure(err, secrets).slice(0, 300)}`,
        502,
      );
    }
    return {
      status: 200,
      title: 'Authorized',
      message: 'Authorized — you can close this window.',
      authorized: { serverId: owner.id, endUserId: flow.end_user_id || null },
    };
  }
}
