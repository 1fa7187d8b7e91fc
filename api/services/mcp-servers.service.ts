import { listMcpTools, type McpServerConnection, type McpToolInfo } from '../../core/mcp/mcp-client.js';
import { protocolMemory } from '../../core/mcp/protocol-revision.js';
import { McpAuthorizationRequired, McpConnectionError } from '../../core/mcp/errors.js';
import { mcpOAuthProvider, type McpOAuthConfig } from '../../core/mcp/oauth/index.js';
import { McpOAuthRepository } from '../../core/repositories/mcp-oauth.repository.js';
import { redactHeaders, type SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import {
  AppError,
  ConflictError,
  NotFoundError,
  STATUS_MESSAGES,
  BadGatewayError,
  ValidationError,
  isUniqueViolation,
} from '../../core/errors.js';
import { keepRedactedUrl, redactUrl } from '../../core/security/redact.js';
import { EgressDeniedError } from '../../core/security/egress-policy.js';
import type { DbMcpServer } from '../../core/db/tables/index.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { McpServerCreateBody, McpServerUpdateBody } from '../schemas/mcp-servers.schemas.js';
import { authorizationView, keptHeaders, OAuthSettings, type AuthorizationView } from './remote-settings.js';
import { assertInProject, requireProject } from './project-scope.js';

export interface McpServer {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  headers: Record<string, string>;
  transport: 'streamable_http' | 'sse';
  oauth: McpOAuthConfig | null;
  per_user_tokens: boolean;
  authorization: McpAuthorizationView;
  protocol_version: string | null;
  created_at: string;
  updated_at: string;
}

/** The project's own OAuth credentials for a server, as the API shows them (never a token). */
export type McpAuthorizationView = AuthorizationView;

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'an MCP server with this name already exists in the project' });

export class McpServersService {
  private readonly repo: McpServersRepository;
  private readonly oauthRepo: McpOAuthRepository;
  private readonly oauth: OAuthSettings;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    /** PUBLIC_URL: where authorization servers send people back. */
    private readonly publicUrl = 'http://127.0.0.1:6060',
  ) {
    this.repo = new McpServersRepository(db);
    this.oauthRepo = new McpOAuthRepository(db);
    this.oauth = new OAuthSettings(secrets);
  }

  private headersOf(row: DbMcpServer): Record<string, string> {
    return row.headers_enc ? this.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
  }

  private async present(row: DbMcpServer): Promise<McpServer> {
    return {
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      // Credentials in the URL (user:pass@, ?api_key=) are shown redacted, like header values.
      endpoint: redactUrl(row.endpoint),
      headers: redactHeaders(this.headersOf(row)),
      transport: row.transport,
      oauth: this.oauth.shown(row.oauth_enc),
      per_user_tokens: row.per_user_tokens,
      authorization: await authorizationView(this.oauthRepo, row.id, row.oauth_enc !== null),
      protocol_version: row.protocol?.version ?? null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  private async row(id: string, projectId?: string): Promise<DbMcpServer> {
    const row = await this.repo.findById(id);
    assertInProject(row, projectId, 'mcp server');
    return row!;
  }

  async create(projectId: string, body: McpServerCreateBody): Promise<McpServer> {
    await requireProject(this.db, projectId);
    try {
      const row = await this.repo.insert({
        project_id: projectId,
        name: body.name,
        endpoint: body.endpoint,
        transport: body.transport,
        headers_enc: this.secrets.encryptJson(body.headers),
        oauth_enc: this.oauth.sealed(body.oauth),
        per_user_tokens: body.per_user_tokens,
      });
      return this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<McpServer[]> {
    await requireProject(this.db, projectId);
    return Promise.all((await this.repo.list(projectId, page)).map((r) => this.present(r)));
  }

  async get(id: string, projectId?: string): Promise<McpServer> {
    return this.present(await this.row(id, projectId));
  }

  async update(id: string, projectId: string | undefined, body: McpServerUpdateBody): Promise<McpServer> {
    const current = await this.row(id, projectId);
    const headersEnc = body.headers
      ? this.secrets.encryptJson(keptHeaders(this.headersOf(current), body.headers))
      : undefined;
    // Likewise an endpoint sent back as it was shown, its credentials redacted.
    const endpoint =
      body.endpoint === undefined ? undefined : keepRedactedUrl(body.endpoint, current.endpoint);
    if (body.endpoint !== undefined && endpoint === undefined)
      throw ValidationError.field(
        'endpoint',
        '"[redacted]" keeps stored credentials, and the URL around it changed',
      );
    try {
      const row = await this.repo.update(id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(endpoint !== undefined ? { endpoint } : {}),
        ...(body.transport !== undefined ? { transport: body.transport } : {}),
        ...(headersEnc !== undefined ? { headers_enc: headersEnc } : {}),
        ...(body.oauth !== undefined ? { oauth_enc: this.oauth.next(current.oauth_enc, body.oauth) } : {}),
        ...(body.per_user_tokens !== undefined ? { per_user_tokens: body.per_user_tokens } : {}),
      });
      if (!row) throw new NotFoundError('mcp server');
      return this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async delete(id: string, projectId?: string): Promise<void> {
    await this.row(id, projectId);
    const referrers = await this.repo.referrers(id);
    if (referrers.length > 0) {
      throw new ConflictError({
        reason: 'still referenced',
        referenced_by: referrers.map((a) => ({ type: 'agent', ...a })),
      });
    }
    await this.repo.delete(id);
  }

  /** Decrypted connection settings with the project's own OAuth credentials, for inspect. */
  async connection(id: string, projectId?: string): Promise<McpServerConnection> {
    const row = await this.row(id, projectId);
    return {
      endpoint: row.endpoint,
      transport: row.transport,
      headers: this.headersOf(row),
      auth: mcpOAuthProvider({ db: this.db, secrets: this.secrets, publicUrl: this.publicUrl }, row, null),
      protocol: protocolMemory(this.db, row),
    };
  }

  async inspect(id: string, projectId?: string): Promise<{ tools: McpToolInfo[] }> {
    const conn = await this.connection(id, projectId);
    try {
      return { tools: await listMcpTools(conn, { timeoutMs: 10_000 }) };
    } catch (err) {
      if (err instanceof McpAuthorizationRequired)
        throw new ConflictError({
          reason: 'the MCP server needs authorization: a person opens authorization_url',
          authorization_url: err.authorizationUrl,
        });
      if (err instanceof McpConnectionError) throw new BadGatewayError({ reason: err.message });
      // The server's egress policy refuses the endpoint: a 4xx, retrying cannot help.
      if (err instanceof EgressDeniedError)
        throw new AppError(403, STATUS_MESSAGES[403]!, { reason: err.message });
      throw err;
    }
  }
}
