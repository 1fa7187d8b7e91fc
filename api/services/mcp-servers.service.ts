import { listMcpTools, type McpServerConnection, type McpToolInfo } from '../../core/mcp/mcp-client.js';
import { McpConnectionError } from '../../core/mcp/errors.js';
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
import { assertInProject, requireProject } from './project-scope.js';

export interface McpServer {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  headers: Record<string, string>;
  transport: 'streamable_http' | 'sse';
  created_at: string;
  updated_at: string;
}

const REDACTED = '[redacted]';
const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'an MCP server with this name already exists in the project' });

export class McpServersService {
  private readonly repo: McpServersRepository;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {
    this.repo = new McpServersRepository(db);
  }

  private headersOf(row: DbMcpServer): Record<string, string> {
    return row.headers_enc ? this.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
  }

  private present(row: DbMcpServer): McpServer {
    return {
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      // Credentials in the URL (user:pass@, ?api_key=) are shown redacted, like header values.
      endpoint: redactUrl(row.endpoint),
      headers: redactHeaders(this.headersOf(row)),
      transport: row.transport,
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
      });
      return this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<McpServer[]> {
    await requireProject(this.db, projectId);
    return (await this.repo.list(projectId, page)).map((r) => this.present(r));
  }

  async get(id: string, projectId?: string): Promise<McpServer> {
    return this.present(await this.row(id, projectId));
  }

  async update(id: string, projectId: string | undefined, body: McpServerUpdateBody): Promise<McpServer> {
    const current = await this.row(id, projectId);
    let headersEnc: string | undefined;
    if (body.headers) {
      // A client that read the server back and sends it again must not
      // overwrite secrets with the redaction marker: keep the stored value.
      const stored = this.headersOf(current);
      const next = Object.fromEntries(
        Object.entries(body.headers).map(([k, v]) => [
          k,
          v === REDACTED && stored[k] !== undefined ? stored[k] : v,
        ]),
      );
      headersEnc = this.secrets.encryptJson(next);
    }
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

  /** Decrypted connection settings, for the tool activities and inspect. */
  async connection(id: string, projectId?: string): Promise<McpServerConnection> {
    const row = await this.row(id, projectId);
    return { endpoint: row.endpoint, transport: row.transport, headers: this.headersOf(row) };
  }

  async inspect(id: string, projectId?: string): Promise<{ tools: McpToolInfo[] }> {
    const conn = await this.connection(id, projectId);
    try {
      return { tools: await listMcpTools(conn, { timeoutMs: 10_000 }) };
    } catch (err) {
      if (err instanceof McpConnectionError) throw new BadGatewayError({ reason: err.message });
      // The server's egress policy refuses the endpoint: a 4xx, retrying cannot help.
      if (err instanceof EgressDeniedError)
        throw new AppError(403, STATUS_MESSAGES[403]!, { reason: err.message });
      throw err;
    }
  }
}
