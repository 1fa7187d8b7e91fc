import { A2aConnectionError, connectA2a, type A2aConnection } from '../../core/a2a/client.js';
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
  isUniqueViolation,
} from '../../core/errors.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';
import type { A2aAgentCreateBody, A2aAgentUpdateBody } from '../schemas/a2a-agents.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import { assertInProject, requireProject } from './project-scope.js';

export interface A2aAgent {
  id: string;
  project_id: string;
  name: string;
  card_url: string;
  headers: Record<string, string>;
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

const REDACTED = '[redacted]';
const nameTaken = () =>
  new ConflictError({ field: 'name', reason: 'an A2A agent with this name already exists in the project' });

/** Remote A2A agents a project's agents may call as tools (docs/a2a-agents.md). */
export class A2aAgentsService {
  private readonly repo: A2aAgentsRepository;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {
    this.repo = new A2aAgentsRepository(db);
  }

  private headersOf(row: DbA2aAgent): Record<string, string> {
    return row.headers_enc ? this.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {};
  }

  private present(row: DbA2aAgent): A2aAgent {
    return {
      id: row.id,
      project_id: row.project_id,
      name: row.name,
      card_url: row.card_url,
      headers: redactHeaders(this.headersOf(row)),
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
      });
      return this.present(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<A2aAgent[]> {
    await requireProject(this.db, projectId);
    return (await this.repo.list(projectId, page)).map((r) => this.present(r));
  }

  async get(id: string, projectId?: string): Promise<A2aAgent> {
    return this.present(await this.row(id, projectId));
  }

  async update(id: string, projectId: string | undefined, body: A2aAgentUpdateBody): Promise<A2aAgent> {
    const current = await this.row(id, projectId);
    let headersEnc: string | undefined;
    if (body.headers) {
      // A value sent back as it was shown ("[redacted]") keeps the stored secret.
      const stored = this.headersOf(current);
      const next = Object.fromEntries(
        Object.entries(body.headers).map(([k, v]) => [
          k,
          v === REDACTED && stored[k] !== undefined ? stored[k] : v,
        ]),
      );
      headersEnc = this.secrets.encryptJson(next);
    }
    try {
      const row = await this.repo.update(id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.card_url !== undefined ? { card_url: body.card_url } : {}),
        ...(headersEnc !== undefined ? { headers_enc: headersEnc } : {}),
      });
      if (!row) throw new NotFoundError('a2a agent');
      return this.present(row);
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
      // The server's egress policy refuses the address: a 4xx, retrying cannot help.
      if (err instanceof A2aConnectionError && err.egressDenied)
        throw new AppError(403, STATUS_MESSAGES[403]!, { reason: err.message });
      if (err instanceof A2aConnectionError) throw new BadGatewayError({ reason: err.message });
      throw err;
    }
  }
}
