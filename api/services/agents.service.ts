import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { notifyChange, type ReadCache } from '../cache/change-feed.js';
import type { Db } from '../../core/db/knex.js';
import { lockSubAgentGraph } from './sub-agent-rules.js';
import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import type { DbAgentVersion } from '../../core/db/tables/index.js';
import {
  AgentVersionsRepository,
  type VersionFilter,
} from '../../core/repositories/agent-versions.repository.js';
import { AgentsRepository, type AgentWithServers } from '../../core/repositories/agents.repository.js';
import { SkillsRepository } from '../../core/repositories/skills.repository.js';
import type { AgentFields, AgentUpdateBody } from '../schemas/agents.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import {
  AGENT_DEFAULTS,
  agentRow,
  agentState,
  normalizeAgent,
  validateAgent,
  type AgentState,
} from './agent-rules.js';
import { AgentWarnings, type AgentWarning } from './agent-warnings.js';
import { CronsRepository } from '../../core/repositories/crons.repository.js';
import { deleteCronSchedules } from './cron-schedules.js';
import { assertInProject, requireProject } from './project-scope.js';

export interface Agent extends Omit<AgentWithServers, 'created_at' | 'updated_at'> {
  warnings: string[];
  created_at: string;
  updated_at: string;
}

/** One version of an agent: its settings as a write left them, and whether they are the ones in force. */
export interface AgentVersion {
  agent_id: string;
  version: number;
  in_force: boolean;
  settings: Record<string, unknown>;
  created_at: string;
}

/** A write of an agent: our API's fields, and the Agent Protocol's graph (the agent it copies). */
export type AgentWrite = AgentUpdateBody & { graph_id?: string | null };

/** How a write treats what it is given: the Agent Protocol merges metadata into the agent's. */
export interface WriteOptions {
  mergeMetadata?: boolean;
}

export class AgentsService {
  private readonly repo: AgentsRepository;
  private readonly versions: AgentVersionsRepository;
  private readonly warnings: AgentWarnings;
  /** Deletes the schedules of a deleted agent's crons; without it they remove themselves when they next fire. */
  private readonly temporal: Client | undefined;

  constructor(
    private readonly db: Db,
    opts: { sandboxEnabled: boolean; temporal?: Client },
    /** Agents by id; invalidated on every write through the change feed. */
    private readonly cache?: ReadCache<AgentWithServers>,
  ) {
    this.temporal = opts.temporal;
    this.repo = new AgentsRepository(db);
    this.versions = new AgentVersionsRepository(db);
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
    const state = normalizeAgent({ ...AGENT_DEFAULTS, ...body } as AgentState);
    return (await this.warnings.of(projectId, [state]))[0]!;
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

  /**
   * A new agent, at its version 1. `id` and `graph_id` are the Agent
   * Protocol's (an assistant id the client chose, the agent it copies).
   */
  async create(
    projectId: string,
    body: AgentFields,
    opts: { id?: string; graph_id?: string | null; skillsFrom?: string } = {},
  ): Promise<Agent> {
    await requireProject(this.db, projectId);
    const state = normalizeAgent({
      ...AGENT_DEFAULTS,
      ...body,
      graph_id: opts.graph_id ?? null,
    } as AgentState);
    const row = await this.write(() =>
      this.repo.transaction(async (trx) => {
        await validateAgent(trx, this.repo, projectId, state, opts.id);
        const row = { ...agentRow(projectId, state, 1), ...(opts.id ? { id: opts.id } : {}) };
        const created = await this.repo.insert(trx, row, state.mcp_servers);
        await this.versions.add(trx, created.id, state);
        if (opts.skillsFrom) await new SkillsRepository(this.db).copyAll(trx, opts.skillsFrom, created.id);
        return created;
      }),
    );
    return this.presentOne(row);
  }

  /** Every update is a new version of the agent, in force from now. */
  async update(
    id: string,
    projectId: string | undefined,
    body: AgentWrite,
    opts: WriteOptions = {},
  ): Promise<Agent> {
    return this.changed(id, projectId, async (trx, current) => {
      const merged = { ...current, ...body, sandbox: body.sandbox ?? current.sandbox };
      if (opts.mergeMetadata && body.metadata) merged.metadata = { ...current.metadata, ...body.metadata };
      const state = agentState(merged);
      await validateAgent(trx, this.repo, current.project_id, state, id);
      const version = await this.versions.add(trx, id, state);
      const row = agentRow(current.project_id, state, version);
      return this.repo.update(trx, id, row, body.mcp_servers ? state.mcp_servers : undefined);
    });
  }

  /**
   * Puts one of the agent's versions back in force, without making a new
   * one: its settings, checked as a write checks them (a model or prompt it
   * names that is gone since is a 400 naming the field; its name now taken,
   * a 409). Pinning the version in force changes nothing.
   */
  async pin(id: string, projectId: string | undefined, version: number): Promise<Agent> {
    return this.changed(id, projectId, async (trx, current) => {
      const pinned = await this.versions.find(id, version, trx);
      if (!pinned) throw new NotFoundError('agent_version');
      if (current.version === version) return current;
      const state = agentState(pinned.snapshot);
      await validateAgent(trx, this.repo, current.project_id, state, id);
      return this.repo.update(trx, id, agentRow(current.project_id, state, version), state.mcp_servers);
    });
  }

  /** A write of the agent under its row lock, announced to every replica's cache. */
  private async changed(
    id: string,
    projectId: string | undefined,
    fn: (trx: Knex.Transaction, current: AgentWithServers) => Promise<AgentWithServers>,
  ): Promise<Agent> {
    const row = await this.write(() =>
      this.repo.transaction(async (trx) => {
        const current = await this.repo.findById(id, trx, true);
        assertInProject(current, projectId, 'agent');
        const row = await fn(trx, current!);
        await notifyChange(trx, 'agents', id);
        return row;
      }),
    ).finally(() => this.cache?.invalidate(id));
    return this.presentOne(row);
  }

  /** The agent's versions, newest first. */
  async listVersions(
    id: string,
    projectId: string | undefined,
    filter: VersionFilter,
  ): Promise<AgentVersion[]> {
    const agent = await this.repo.findById(id);
    assertInProject(agent, projectId, 'agent');
    return (await this.versions.list(id, filter)).map((v) => versionView(v, agent!.version));
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
    // Its crons' rows go with it; their schedules are deleted once it is gone.
    const cronIds = this.temporal ? await new CronsRepository(this.db).idsOf({ agentId: id }) : [];
    await this.repo.transaction(async (trx) => {
      // Under the lock sub-agent saves take: no save can list it between this check and the delete.
      await lockSubAgentGraph(trx, row!.project_id);
      const referrers = await this.repo.subAgentReferrers(id, trx);
      if (referrers.length > 0)
        throw new ConflictError({
          reason: 'still a sub-agent of other agents',
          referenced_by: referrers.map((a) => ({ type: 'agent', ...a })),
        });
      await this.repo.delete(id, trx);
      await notifyChange(trx, 'agents', id);
    });
    this.cache?.invalidate(id);
    if (this.temporal && cronIds.length) await deleteCronSchedules(this.temporal, cronIds);
  }
}

function versionView(v: DbAgentVersion, inForce: number): AgentVersion {
  return {
    agent_id: v.agent_id,
    version: v.version,
    in_force: v.version === inForce,
    settings: v.snapshot,
    created_at: v.created_at.toISOString(),
  };
}
