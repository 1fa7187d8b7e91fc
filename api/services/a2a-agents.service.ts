import { A2aConnectionError, connectA2a, fetchA2aCard, type A2aConnection } from '../../core/a2a/client.js';
import { A2aOAuthUnavailable, authorizeA2a } from '../../core/a2a/oauth.js';
import { a2aToolName, cardSkills, type A2aSkillInfo } from '../../core/a2a/skills.js';
import { redactHeaders, type SecretBox } from '../../core/crypto/secrets.js';
import type { Db } from '../../core/db/knex.js';
import type { DbA2aAgent } from '../../core/db/tables/index.js';
import {
  AppError,
  BadGatewayError,
  ConflictError,
  NotFoundError,
  STATUS_MESSAGES,
  ValidationError,
  isUniqueViolation,
} from '../../core/errors.js';
import type { McpOAuthConfig } from '../../core/mcp/oauth/index.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';
import { McpOAuthRepository } from '../../core/repositories/mcp-oauth.repository.js';
import { findEgressDenial } from '../../core/security/egress-policy.js';
import type { A2aAgentCreateBody, A2aAgentUpdateBody } from '../schemas/a2a-agents.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import { McpOAuthService } from './mcp-oauth.service.js';
import { assertInProject, requireProject } from './project-scope.js';
import { authorizationView, keptHeaders, OAuthSettings, type AuthorizationView } from './remote-settings.js';

export interface A2aAgent {
  id: string;
  project_id: string;
  name: string;
  card_url: string;
  headers: Record<string, string>;
  oauth: McpOAuthConfig | null;
  per_user_tokens: boolean;
  authorization: AuthorizationView;
  created_at: string;
  updated_at: string;
}

/** What inspect found on the card. */
export interface A2aInspection {
  name: string;
  description: string;
  version: string;
  streaming: boolean;
  skills: Array<A2aSkillInfo & { tool: string }>;
}

const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'an A2A agent with this name already exists in the project' });

/** Remote A2A agents a project's agents may call as tools (docs/a2a-agents.md). */
export class A2aAgentsService {
  private readonly repo: A2aAgentsRepository;
  private readonly oauthRepo: McpOAuthRepository;
  private readonly oauth: OAuthSettings;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    /** PUBLIC_URL: where authorization servers send people back. */
    private readonly publicUrl: string,
  ) {
    this.repo = new A2aAgentsRepository(db);
    this.oauthRepo = new McpOAuthRepository(db, 'a2a_agent_id');
    this.oauth = new OAuthSettings(secrets);
  }

  private headersOf(row: DbA2aAgent): Record<string, string> {
    return row.headers_enc ? this.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
  }

  private async present(row: DbA2aAgent): Promise<A2aAgent> {
    return {
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      card_url: row.card_url,
      headers: redactHeaders(this.headersOf(row)),
      oauth: this.oauth.shown(row.oauth_enc),
      per_user_tokens: row.per_user_tokens,
      authorization: await authorizationView(this.oauthRepo, row.id, row.oauth_enc !== null),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  private async row(id: string, projectId?: string): Promise<DbA2aAgent> {
    const row = await this.repo.findById(id);
    assertInProject(row, projectId, 'a2a agent');
    return row!;
  }

  async create(projectId: string, body: A2aAgentCreateBody): Promise<A2aAgent> {
    await requireProject(this.db, projectId);
    try {
      const row = await this.repo.insert({
        project_id: projectId,
        name: body.name,
        card_url: body.card_url,
        headers_enc: this.secrets.encryptJson(body.headers),
        oauth_enc: this.oauth.sealed(body.oauth),
        per_user_tokens: body.per_user_tokens,
      });
      return await this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<A2aAgent[]> {
    await requireProject(this.db, projectId);
    return Promise.all((await this.repo.list(projectId, page)).map((r) => this.present(r)));
  }

  async get(id: string, projectId?: string): Promise<A2aAgent> {
    return await this.present(await this.row(id, projectId));
  }

  async update(id: string, projectId: string | undefined, body: A2aAgentUpdateBody): Promise<A2aAgent> {
    const current = await this.row(id, projectId);
    const headersEnc = body.headers
      ? this.secrets.encryptJson(keptHeaders(this.headersOf(current), body.headers))
      : undefined;
    try {
      const row = await this.repo.update(id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.card_url !== undefined ? { card_url: body.card_url } : {}),
        ...(headersEnc !== undefined ? { headers_enc: headersEnc } : {}),
        ...(body.oauth !== undefined ? { oauth_enc: this.oauth.next(current.oauth_enc, body.oauth) } : {}),
        ...(body.per_user_tokens !== undefined ? { per_user_tokens: body.per_user_tokens } : {}),
      });
      if (!row) throw new NotFoundError('a2a agent');
      return await this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async delete(id: string, projectId?: string): Promise<void> {
    await this.row(id, projectId);
    const referrers = await this.repo.referrers(id);
    if (referrers.length > 0)
      throw new ConflictError({
        reason: 'still referenced',
        referenced_by: referrers.map((a) => ({ type: 'agent', ...a })),
      });
    await this.repo.delete(id);
  }

  /** Decrypted connection settings. */
  async connection(id: string, projectId?: string): Promise<A2aConnection & { name: string }> {
    const row = await this.row(id, projectId);
    return { name: row.name, cardUrl: row.card_url, headers: this.headersOf(row) };
  }

  /** Fetches the card (502 saying why when it cannot) and lists its skills with their tool names. */
  async inspect(id: string, projectId?: string): Promise<A2aInspection> {
    const conn = await this.connection(id, projectId);
    try {
      const { card } = await connectA2a(conn, { timeoutMs: 10_000 });
      return {
        name: card.name,
        description: card.description,
        version: card.version,
        streaming: Boolean(card.capabilities?.streaming),
        skills: cardSkills(card).map((s) => ({ ...s, tool: a2aToolName(conn.name, s.id) })),
      };
    } catch (err) {
      throw connectionError(err);
    }
  }

  /** Whose credentials: an end user's only for an agent that keeps tokens per user. */
  private owner(row: DbA2aAgent, endUserId: string | undefined): string {
    if (endUserId !== undefined && !row.per_user_tokens)
      throw ValidationError.field(
        'end_user_id',
        'this A2A agent keeps one authorization for the project: set per_user_tokens to authorize end users one by one',
      );
    return endUserId ?? '';
  }

  /**
   * Starts OAuth with the authorization server the agent card names: a URL
   * for a person to open, or "authorized" when a token came without anyone.
   * 409 when the card offers no OAuth 2 flow for the configured grant, 502
   * when the card or the authorization server fails.
   */
  async authorize(
    id: string,
    projectId: string | undefined,
    endUserId?: string,
  ): Promise<{ status: 'authorized' } | { authorization_url: string }> {
    const row = await this.row(id, projectId);
    this.owner(row, endUserId);
    const deps = { db: this.db, secrets: this.secrets, publicUrl: this.publicUrl };
    try {
      const card = await fetchA2aCard(
        { cardUrl: row.card_url, headers: this.headersOf(row) },
        { timeoutMs: 10_000 },
      );
      return await authorizeA2a(deps, row, card, endUserId ?? null, { fresh: true });
    } catch (err) {
      if (err instanceof A2aOAuthUnavailable) throw new ConflictError({ reason: err.message });
      throw connectionError(err, this.oauth.open(row.oauth_enc)?.client_secret);
    }
  }

  /** Revokes the tokens where the authorization server offers it (best effort), then forgets them. */
  async deauthorize(id: string, projectId: string | undefined, endUserId?: string): Promise<void> {
    const row = await this.row(id, projectId);
    const owner = this.owner(row, endUserId);
    const creds = await this.oauthRepo.credentials(row.id, owner);
    if (creds)
      await new McpOAuthService(this.db, this.secrets, this.publicUrl)
        .revoke(creds, this.oauth.open(row.oauth_enc))
        .catch(() => undefined);
    await this.oauthRepo.deleteCredentials(row.id, owner);
  }
}

/** A failure to reach the agent or its authorization server, as the API answers it (never a secret). */
function connectionError(err: unknown, secret?: string): Error {
  if (err instanceof AppError) return err;
  // The server's egress policy refuses the address: a 4xx, retrying cannot help.
  const denied = err instanceof A2aConnectionError && err.egressDenied ? err : findEgressDenial(err);
  if (denied) return new AppError(403, STATUS_MESSAGES[403]!, { reason: denied.message });
  const message = err instanceof Error ? err.message : String(err);
  const said = secret ? message.split(secret).join('[redacted]') : message;
  return new BadGatewayError({
    reason: err instanceof A2aConnectionError ? said : `the authorization server failed: ${said}`,
  });
}
