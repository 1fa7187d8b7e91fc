import type { Knex } from 'knex';
import { notifyChange, type ReadCache } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import {
  ConflictError,
  NotFoundError,
  ValidationError,
  type FieldError,
  isUniqueViolation,
} from '../../core/errors.js';
import type { DbAgentWrite } from '../../core/db/tables/index.js';
import { defaultPrice } from '../../core/metering/pricing.js';
import { AgentsRepository, type AgentWithServers } from '../../core/repositories/agents.repository.js';
import type {
  AgentFields,
  AgentUpdateBody,
  McpEntry,
  PromptLabel,
  SandboxSettings,
} from '../schemas/agents.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import { AgentWarnings, type AgentWarning } from './agent-warnings.js';
import { assertInProject, requireProject } from './project-scope.js';

export interface Agent extends Omit<AgentWithServers, 'created_at' | 'updated_at'> {
  warnings: string[];
  created_at: string;
  updated_at: string;
}

/** An agent's whole configuration after defaults: what gets validated and stored. */
type AgentState = Omit<DbAgentWrite, 'project_id'> & { mcp_servers: McpEntry[] };

const DEFAULTS: Omit<AgentState, 'name' | 'model_id' | 'prompt_id'> = {
  description: null,
  prompt_label: 'latest',
  schema_id: null,
  enable_history: true,
  summarizer_type: 'none',
  llm_summarizer_token_threshold: null,
  llm_summarizer_keep_recent_count: null,
  llm_summarizer_prompt_id: null,
  llm_summarizer_prompt_label: null,
  llm_summarizer_model_id: null,
  sliding_window_keep_count: null,
  sandbox: { enabled: false, docker_image: null, require_approval: false },
  max_iterations: 20,
  approval_timeout_ms: null,
  budget: null,
  budget_wait_timeout_ms: null,
  non_idempotent_tools: [],
  decision_timeout_ms: null,
  mcp_servers: [],
};

export class AgentsService {
  private readonly repo: AgentsRepository;
  private readonly warnings: AgentWarnings;

  constructor(
    private readonly db: Db,
    opts: { sandboxEnabled: boolean },
    /** Agents by id; invalidated on every write through the change feed. */
    private readonly cache?: ReadCache<AgentWithServers>,
  ) {
    this.repo = new AgentsRepository(db);
    this.warnings = new AgentWarnings(this.repo, opts.sandboxEnabled);
  }

  /**
   * Agents of one project as the API shows them. Warnings are worked out on
   * every read: they depend on what else may change meanwhile (the project's
   * key and its grants, providers, the prompt's labels).
   */
  private async present(rows: AgentWithServers[]): Promise<Agent[]> {
    const projectId = rows[0]?.project_id;
    if (!projectId) return [];
    const warnings = await this.warnings.of(projectId, rows);
    return rows.map((row, i) => ({
      ...row,
      warnings: warnings[i]!.map((w) => w.message),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    }));
  }

  private async presentOne(row: AgentWithServers): Promise<Agent> {
    return (await this.present([row]))[0]!;
  }

  /** What an agent configured so would be warned about, without saving it (the console's form, while it is filled in). */
  async check(projectId: string, body: AgentUpdateBody): Promise<AgentWarning[]> {
    await requireProject(this.db, projectId);
    const state = AgentsService.normalize({ ...DEFAULTS, ...body } as AgentState);
    return (await this.warnings.of(projectId, [state]))[0]!;
  }

  private static normalize(state: AgentState): AgentState {
    const sandbox: SandboxSettings = {
      ...state.sandbox,
      docker_image: state.sandbox.docker_image ?? null,
      require_approval: state.sandbox.require_approval ?? false,
    };
    return { ...state, summarizer_type: state.summarizer_type ?? 'none', sandbox };
  }

  /** Cross-field rules and every reference, all problems reported at once (400). */
  private async validate(conn: Knex.Transaction, projectId: string, a: AgentState): Promise<void> {
    const problems: FieldError[] = [];
    const need = (field: string, message: string) => problems.push({ field, message, type: 'any.required' });
    if (a.summarizer_type === 'llm') {
      if (!a.llm_summarizer_token_threshold)
        need(
          'llm_summarizer_token_threshold',
          'llm_summarizer_token_threshold (> 0) is required when summarizer_type is llm',
        );
      if (!a.llm_summarizer_keep_recent_count)
        need(
          'llm_summarizer_keep_recent_count',
          'llm_summarizer_keep_recent_count (>= 1) is required when summarizer_type is llm',
        );
      if (!a.llm_summarizer_prompt_id)
        need('llm_summarizer_prompt_id', 'llm_summarizer_prompt_id is required when summarizer_type is llm');
    }
    if (a.summarizer_type === 'sliding_window' && !a.sliding_window_keep_count) {
      need(
        'sliding_window_keep_count',
        'sliding_window_keep_count (>= 1) is required when summarizer_type is sliding_window',
      );
    }

    const exists = async (table: string, id: string) =>
      Boolean(await conn(table).where({ id, project_id: projectId }).first('id'));
    const ref = async (field: string, table: string, what: string, id: string | null | undefined) => {
      if (id && !(await exists(table, id))) {
        problems.push({
          field,
          message: `${field} does not name an existing ${what} in this project`,
          type: 'any.reference',
        });
        return false;
      }
      return Boolean(id);
    };
    const labelled = async (field: string, promptId: string, label: PromptLabel) => {
      if (!(await this.repo.promptHasLabel(conn, promptId, label))) {
        problems.push({
          field,
          message: `the prompt has no version labelled ${label}`,
          type: 'any.reference',
        });
      }
    };

    if ((await ref('model_id', 'models', 'model', a.model_id)) && a.budget) {
      const model = await conn('models').where({ id: a.model_id }).first('model_id', 'pricing');
      if (model && !model.pricing && !defaultPrice(model.model_id))
        problems.push({
          field: 'budget',
          message: `a budget needs a price for the agent's model: no price is known for "${model.model_id}"; set pricing on the model`,
          type: 'any.invalid',
        });
    }
    if (await ref('prompt_id', 'prompts', 'prompt', a.prompt_id))
      await labelled('prompt_label', a.prompt_id, a.prompt_label);
    await ref('schema_id', 'schemas', 'schema', a.schema_id);
    if (await ref('llm_summarizer_prompt_id', 'prompts', 'prompt', a.llm_summarizer_prompt_id)) {
      await labelled(
        'llm_summarizer_prompt_label',
        a.llm_summarizer_prompt_id!,
        a.llm_summarizer_prompt_label ?? 'latest',
      );
    }
    await ref('llm_summarizer_model_id', 'models', 'model', a.llm_summarizer_model_id);
    for (const [i, entry] of a.mcp_servers.entries()) {
      await ref(`mcp_servers.${i}.mcp_server_id`, 'mcp_servers', 'MCP server', entry.mcp_server_id);
    }
    if (problems.length > 0) throw new ValidationError(problems);
  }

  private static toRow(projectId: string, a: AgentState): DbAgentWrite {
    const { mcp_servers: _servers, ...rest } = a;
    return {
      ...rest,
      project_id: projectId,
      sandbox: JSON.stringify(a.sandbox) as unknown as SandboxSettings,
    };
  }

  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({
          field: 'name',
          reason: 'an agent with this name already exists in the project',
        });
      throw err;
    }
  }

  async create(projectId: string, body: AgentFields): Promise<Agent> {
    await requireProject(this.db, projectId);
    const state = AgentsService.normalize({ ...DEFAULTS, ...body } as AgentState);
    const row = await this.write(() =>
      this.repo.transaction(async (trx) => {
        await this.validate(trx, projectId, state);
        return this.repo.insert(trx, AgentsService.toRow(projectId, state), state.mcp_servers);
      }),
    );
    return this.presentOne(row);
  }

  async update(id: string, projectId: string | undefined, body: AgentUpdateBody): Promise<Agent> {
    const row = await this.write(() =>
      this.repo.transaction(async (trx) => {
        const current = await this.repo.findById(id, trx, true);
        assertInProject(current, projectId, 'agent');
        const { id: _id, project_id, created_at: _c, updated_at: _u, ...existing } = current!;
        const sandbox = body.sandbox ?? existing.sandbox;
        const state = AgentsService.normalize({ ...existing, ...body, sandbox } as AgentState);
        await this.validate(trx, project_id, state);
        const row = await this.repo.update(
          trx,
          id,
          AgentsService.toRow(project_id, state),
          body.mcp_servers ? state.mcp_servers : undefined,
        );
        await notifyChange(trx, 'agents', id);
        return row;
      }),
    ).finally(() => this.cache?.invalidate(id));
    return this.presentOne(row);
  }

  async list(projectId: string, page: Page): Promise<Agent[]> {
    await requireProject(this.db, projectId);
    return this.present(await this.repo.list(projectId, page));
  }

  async get(id: string, projectId?: string): Promise<Agent> {
    const row = this.cache
      ? await this.cache.get(id, () => this.repo.findById(id))
      : await this.repo.findById(id);
    assertInProject(row, projectId, 'agent');
    return this.presentOne(row!);
  }

  /** By name: with project_id, or across projects when exactly one agent has that name. */
  async getByName(name: string, projectId?: string): Promise<Agent> {
    if (projectId) await requireProject(this.db, projectId);
    const rows = await this.repo.findByName(name, projectId);
    if (rows.length === 0) throw new NotFoundError('agent');
    if (rows.length > 1) {
      throw ValidationError.field(
        'project_id',
        'several projects have an agent with this name: give project_id',
        'any.required',
      );
    }
    return this.presentOne(rows[0]!);
  }

  async delete(id: string, projectId?: string): Promise<void> {
    const row = await this.repo.findById(id);
    assertInProject(row, projectId, 'agent');
    await this.repo.transaction(async (trx) => {
      await this.repo.delete(id, trx);
      await notifyChange(trx, 'agents', id);
    });
    this.cache?.invalidate(id);
  }
}
