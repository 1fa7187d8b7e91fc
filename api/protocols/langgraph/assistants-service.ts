/**
 * The Agent Protocol's assistants, translated to agents: creating an
 * assistant copies an agent (its graph: settings and skills) with the assistant's own name,
 * config, context and metadata; every change is a new version of the agent,
 * through the same service as our API's, so both doors see one agent.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../core/db/knex.js';
import { AppError, NotFoundError } from '../../../core/errors.js';
import { AgentVersionsRepository } from '../../../core/repositories/agent-versions.repository.js';
import {
  AgentsRepository,
  type AgentSort,
  type AgentWithServers,
} from '../../../core/repositories/agents.repository.js';
import type { AgentFields } from '../../schemas/agents.schemas.js';
import { agentState } from '../../services/agent-rules.js';
import type { AgentsService, AgentWrite } from '../../services/agents.service.js';
import type { RunWaitsService } from '../../services/run-waits.service.js';
import type {
  AssistantCreateBody,
  AssistantFilterBody,
  AssistantPatchBody,
  AssistantSearchBody,
  AssistantVersionsBody,
} from './assistants-schemas.js';
import { assistantOf, assistantVersionOf, selected, type Assistant } from './assistants-view.js';
import { ProtocolError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What an assistant sets itself; the rest of an agent's settings (model, prompt, tools …) come from its graph. */
const OWN = ['name', 'description', 'metadata', 'config', 'context', 'graph_id'] as const;

/** Every setting of the agent but the assistant's own: what a copy takes from its graph. */
function graphSettings(source: AgentWithServers): Omit<AgentWrite, (typeof OWN)[number]> {
  const state: Record<string, unknown> = { ...agentState(source) };
  for (const k of OWN) delete state[k];
  return state;
}

/** A name for a copy: its graph's, with a short suffix that keeps names unique in the project. */
const copyName = (source: string) => `${source.slice(0, 190)} ${randomBytes(3).toString('hex')}`;

/** The fields of a body that are given (the protocol's clients send null for "not given"). */
function given<T extends object>(body: T): Partial<{ [K in keyof T]: NonNullable<T[K]> }> {
  return Object.fromEntries(
    Object.entries(body).filter(([, v]) => v !== null && v !== undefined),
  ) as Partial<{
    [K in keyof T]: NonNullable<T[K]>;
  }>;
}

export interface SearchPage {
  items: Array<Partial<Assistant>>;
  /** Whether there is a next page. */
  more: boolean;
}

export class AssistantsDoor {
  private readonly repo: AgentsRepository;
  private readonly versionsRepo: AgentVersionsRepository;

  constructor(
    db: Db,
    /** Our API's agents: both doors write one agent the same way. */
    private readonly agents: AgentsService,
    private readonly waits: Pick<RunWaitsService, 'wake'>,
  ) {
    this.repo = new AgentsRepository(db);
    this.versionsRepo = new AgentVersionsRepository(db);
  }

  /** An agent of the project by id or by name; undefined when there is none. */
  private async lookup(projectId: string, ref: string): Promise<AgentWithServers | undefined> {
    if (UUID.test(ref)) {
      const byId = await this.repo.findById(ref);
      if (byId) return byId.project_id === projectId ? byId : undefined;
    }
    return (await this.repo.findByName(ref, projectId))[0];
  }

  /** The assistant named in the path: 404 "Assistant not found" when the project has none so named. */
  async find(projectId: string, ref: string): Promise<AgentWithServers> {
    const agent = await this.lookup(projectId, ref);
    if (!agent) throw new NotFoundError('agent');
    return agent;
  }

  private async graph(projectId: string, ref: string): Promise<AgentWithServers> {
    const agent = await this.lookup(projectId, ref);
    if (!agent)
      throw new ProtocolError(404, `Graph "${ref}" not found: name an agent of the project (id or name)`);
    return agent;
  }

  async get(projectId: string, ref: string): Promise<Assistant> {
    return assistantOf(await this.find(projectId, ref));
  }

  /** A copy of the agent `graph_id` names, with the assistant's own settings; `if_exists` as the protocol says. */
  async create(projectId: string, body: AssistantCreateBody): Promise<Assistant> {
    if (body.assistant_id) {
      const existing = await this.repo.findById(body.assistant_id);
      if (existing && existing.project_id === projectId && body.if_exists === 'do_nothing')
        return assistantOf(existing);
      if (existing) throw new ProtocolError(409, 'Assistant already exists');
    }
    const source = await this.graph(projectId, body.graph_id);
    const own = given(body);
    const fields = {
      ...graphSettings(source),
      name: own.name ?? copyName(source.name),
      description: own.description ?? null,
      config: own.config ?? {},
      context: own.context ?? {},
      metadata: own.metadata ?? {},
    } as AgentFields;
    const opts = {
      graph_id: source.id,
      skillsFrom: source.id,
      ...(body.assistant_id ? { id: body.assistant_id } : {}),
    };
    return assistantOf(await this.agents.create(projectId, fields, opts));
  }

  /**
   * A new version of the agent with what is given; metadata is merged into
   * the agent's. Another graph gives the agent that graph's settings.
   */
  async patch(projectId: string, ref: string, body: AssistantPatchBody): Promise<Assistant> {
    const agent = await this.find(projectId, ref);
    const { graph_id: graphRef, ...own } = given(body);
    let write: AgentWrite = own;
    if (graphRef !== undefined) {
      const graph = await this.graph(projectId, graphRef);
      const current = agent.graph_id ?? agent.id;
      if (graph.id !== current)
        write = { ...graphSettings(graph), ...own, graph_id: graph.id === agent.id ? null : graph.id };
    }
    return assistantOf(await this.agents.update(agent.id, projectId, write, { mergeMetadata: true }));
  }

  async delete(projectId: string, ref: string): Promise<void> {
    const agent = await this.find(projectId, ref);
    await this.agents.delete(agent.id, projectId);
  }

  /** The search's graph as an agent id; null when it names no agent (nothing matches). */
  private async graphFilter(
    projectId: string,
    body: AssistantFilterBody,
  ): Promise<string | undefined | null> {
    if (!body.graph_id) return undefined;
    if (UUID.test(body.graph_id)) return body.graph_id.toLowerCase();
    return (await this.lookup(projectId, body.graph_id))?.id ?? null;
  }

  async search(projectId: string, body: AssistantSearchBody): Promise<SearchPage> {
    const graphId = await this.graphFilter(projectId, body);
    if (graphId === null) return { items: [], more: false };
    const sort: AgentSort = {
      by: body.sort_by === 'assistant_id' ? 'id' : (body.sort_by ?? 'created_at'),
      order: body.sort_order ?? 'desc',
    };
    // One more than the page: whether a next page exists.
    const rows = await this.repo.search(
      projectId,
      { ...given({ metadata: body.metadata, name: body.name }), ...(graphId ? { graphId } : {}) },
      sort,
      { limit: body.limit + 1, offset: body.offset },
    );
    const items = rows.slice(0, body.limit).map((r) => selected(assistantOf(r), body.select));
    return { items, more: rows.length > body.limit };
  }

  async count(projectId: string, body: AssistantFilterBody): Promise<number> {
    const graphId = await this.graphFilter(projectId, body);
    if (graphId === null) return 0;
    const filter = {
      ...given({ metadata: body.metadata, name: body.name }),
      ...(graphId ? { graphId } : {}),
    };
    return this.repo.count(projectId, filter);
  }

  /** The agent's versions as the assistants they were, newest first. */
  async versions(projectId: string, ref: string, body: AssistantVersionsBody): Promise<Assistant[]> {
    const agent = await this.find(projectId, ref);
    const filter = { limit: body.limit, offset: body.offset, ...given({ metadata: body.metadata }) };
    return (await this.versionsRepo.list(agent.id, filter)).map(assistantVersionOf);
  }

  /** Puts a version back in force (our API's pin); runs waiting on the agent's budget look again. */
  async setLatest(projectId: string, ref: string, version: number): Promise<Assistant> {
    const agent = await this.find(projectId, ref);
    try {
      const pinned = assistantOf(await this.agents.pin(agent.id, projectId, version));
      await this.waits.wake('agent', agent.id);
      return pinned;
    } catch (err) {
      if (err instanceof AppError && err.status === 404 && err.details.resource === 'agent_version')
        throw new ProtocolError(404, 'Assistant version not found');
      throw err;
    }
  }
}
