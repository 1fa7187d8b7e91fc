import type { Config } from '../../core/config.js';
import type { CronOverlapPolicy, CronPayload, CronRunCompleted, DbCron } from '../../core/db/tables/index.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import { CronsRepository, type CronFilter, type CronSort } from '../../core/repositories/crons.repository.js';
import type { Page } from '../../core/repositories/types.js';
import { cronScheduleId } from '../../workflows/turns.definitions.js';
import type { AppDeps } from '../deps.js';
import { CronSchedules } from './cron-schedules.js';

/** A cron as a request asks for it; the door has turned its input into our message. */
export interface CronCreate {
  /** The agent's id or name. */
  assistant: string;
  /** The conversation's client id; absent: a new conversation each run. */
  threadId?: string | undefined;
  schedule: string;
  timezone?: string | undefined;
  endTime?: Date | null | undefined;
  payload: CronPayload;
  message: DbCron['message'];
  metadata?: Record<string, unknown> | undefined;
  overlapPolicy?: CronOverlapPolicy | undefined;
  /** Without a thread: delete (default) or keep each run's new conversation once the run ends. */
  onRunCompleted?: CronRunCompleted | undefined;
  enabled?: boolean | undefined;
}

export type CronPatch = Partial<
  Pick<
    CronCreate,
    | 'schedule'
    | 'timezone'
    | 'endTime'
    | 'payload'
    | 'message'
    | 'metadata'
    | 'overlapPolicy'
    | 'onRunCompleted'
    | 'enabled'
  >
>;

/** What our API shows of a cron. */
export interface CronView {
  id: string;
  project_id: string;
  agent_id: string;
  conversation_id: string | null;
  schedule: string;
  timezone: string;
  end_time: string | null;
  overlap_policy: CronOverlapPolicy;
  on_run_completed: CronRunCompleted | null;
  paused: boolean;
  next_run_date: string | null;
  payload: CronPayload;
  metadata: Record<string, unknown>;
  schedule_id: string;
  temporal_ui_url: string | null;
  created_at: string;
  updated_at: string;
}

const MACROS = new Set(['@yearly', '@monthly', '@weekly', '@daily', '@hourly']);
const CRON_FIELD = /^[0-9A-Za-z*?,/-]+$/;

/** Five fields (minute, hour, day of month, month, day of week) or a shorthand; Temporal checks the values. */
export function checkSchedule(schedule: string): void {
  const s = schedule.trim();
  const fields = s.split(/\s+/);
  if (MACROS.has(s) || (fields.length === 5 && fields.every((f) => CRON_FIELD.test(f)))) return;
  throw ValidationError.field(
    'schedule',
    'schedule must be a cron expression of five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly',
    'string.pattern.base',
  );
}

/** An IANA time zone name the runtime knows (e.g. "Europe/Paris", "UTC"). */
export function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw ValidationError.field(
      'timezone',
      `timezone "${timezone}" is not an IANA time zone name`,
      'any.invalid',
    );
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function cronScheduleUiUrl(config: Config, cronId: string): string | null {
  if (!config.temporalUiUrl) return null;
  const base = config.temporalUiUrl.replace(/\/$/, '');
  return `${base}/namespaces/${encodeURIComponent(config.temporalNamespace)}/schedules/${encodeURIComponent(cronScheduleId(cronId))}`;
}

export function toCronView(row: DbCron, config: Config): CronView {
  return {
    id: row.id,
    project_id: row.project_id,
    agent_id: row.agent_id,
    conversation_id: row.conversation_id,
    schedule: row.schedule,
    timezone: row.timezone,
    end_time: iso(row.end_time),
    overlap_policy: row.overlap_policy,
    on_run_completed: row.on_run_completed,
    paused: row.paused,
    next_run_date: iso(row.next_run_date),
    payload: row.payload,
    metadata: row.metadata,
    schedule_id: cronScheduleId(row.id),
    temporal_ui_url: cronScheduleUiUrl(config, row.id),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * Crons: a row each, mirrored by a Temporal Schedule. The row is written
 * first and the schedule after; a schedule that cannot be made removes the
 * row again, so neither outlives the other.
 */
export class CronsService {
  readonly repo: CronsRepository;
  private readonly agents: AgentsRepository;
  private readonly conversations: ConversationsRepository;
  readonly schedules: CronSchedules;

  constructor(deps: Pick<AppDeps, 'db' | 'config' | 'logger' | 'temporal'>) {
    this.repo = new CronsRepository(deps.db);
    this.agents = new AgentsRepository(deps.db);
    this.conversations = new ConversationsRepository(deps.db);
    this.schedules = new CronSchedules(deps.temporal.client, deps.config, deps.logger);
  }

  /** The agent by id or by name, in the project; 404 otherwise. */
  async resolveAgent(projectId: string, idOrName: string): Promise<string> {
    const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
    const byId = isUuid ? await this.agents.findById(idOrName) : undefined;
    if (byId?.project_id === projectId) return byId.id;
    const [byName] = await this.agents.findByName(idOrName, projectId);
    if (byName) return byName.id;
    throw new NotFoundError('agent');
  }

  async create(projectId: string, c: CronCreate): Promise<DbCron> {
    checkSchedule(c.schedule);
    const timezone = c.timezone ?? 'UTC';
    checkTimezone(timezone);
    const agentId = await this.resolveAgent(projectId, c.assistant);
    let conversationPk: string | null = null;
    if (c.threadId !== undefined) {
      const [conversation] = await this.conversations.findById(c.threadId, projectId);
      if (!conversation) throw new NotFoundError('conversation');
      conversationPk = conversation.pk;
    }
    const row = await this.repo.insert({
      project_id: projectId,
      agent_id: agentId,
      conversation_pk: conversationPk,
      conversation_id: c.threadId ?? null,
      schedule: c.schedule.trim(),
      timezone,
      end_time: c.endTime ?? null,
      payload: JSON.stringify(c.payload),
      message: JSON.stringify(c.message),
      metadata: JSON.stringify(c.metadata ?? {}),
      overlap_policy: c.overlapPolicy ?? 'skip',
      on_run_completed: c.threadId === undefined ? (c.onRunCompleted ?? 'delete') : null,
      paused: c.enabled === false,
    });
    let next: Date | null;
    try {
      next = await this.schedules.create(row);
    } catch (err) {
      await this.repo.delete(row.id);
      throw err;
    }
    await this.repo.setNextRunDate(row.id, next);
    return { ...row, next_run_date: next };
  }

  async find(id: string, projectId?: string): Promise<DbCron> {
    const row = await this.repo.findById(id, projectId);
    if (!row) throw new NotFoundError('cron');
    return row;
  }

  search(filter: CronFilter, page: Page, sort: CronSort): Promise<DbCron[]> {
    return this.repo.search(filter, page, sort);
  }

  count(filter: CronFilter): Promise<number> {
    return this.repo.count(filter);
  }

  /** The schedule first (a refused expression changes nothing), then the row. */
  async update(id: string, projectId: string | undefined, p: CronPatch): Promise<DbCron> {
    const row = await this.find(id, projectId);
    if (p.schedule !== undefined) checkSchedule(p.schedule);
    if (p.timezone !== undefined) checkTimezone(p.timezone);
    const next: DbCron = {
      ...row,
      ...(p.schedule !== undefined ? { schedule: p.schedule.trim() } : {}),
      ...(p.timezone !== undefined ? { timezone: p.timezone } : {}),
      ...(p.endTime !== undefined ? { end_time: p.endTime } : {}),
      ...(p.overlapPolicy !== undefined ? { overlap_policy: p.overlapPolicy } : {}),
      ...(p.enabled !== undefined ? { paused: !p.enabled } : {}),
      ...(p.onRunCompleted !== undefined && row.conversation_id === null
        ? { on_run_completed: p.onRunCompleted }
        : {}),
    };
    const nextRun = await this.schedules.update(next);
    const updated = await this.repo.update(id, {
      schedule: next.schedule,
      timezone: next.timezone,
      end_time: next.end_time,
      overlap_policy: next.overlap_policy,
      on_run_completed: next.on_run_completed,
      paused: next.paused,
      next_run_date: nextRun,
      ...(p.payload !== undefined ? { payload: JSON.stringify({ ...row.payload, ...p.payload }) } : {}),
      ...(p.message !== undefined ? { message: JSON.stringify(p.message) } : {}),
      ...(p.metadata !== undefined ? { metadata: JSON.stringify({ ...row.metadata, ...p.metadata }) } : {}),
    });
    if (!updated) throw new NotFoundError('cron');
    return updated;
  }

  async setPaused(id: string, projectId: string | undefined, paused: boolean): Promise<DbCron> {
    await this.find(id, projectId);
    const next = await this.schedules.setPaused(id, paused);
    const updated = await this.repo.update(id, { paused, next_run_date: next });
    if (!updated) throw new NotFoundError('cron');
    return updated;
  }

  /** The schedule first: when Temporal is away the row stays (503) and the delete can be repeated. */
  async delete(id: string, projectId?: string): Promise<void> {
    await this.find(id, projectId);
    await this.schedules.delete(id);
    await this.repo.delete(id);
  }

  /**
   * The crons of an agent or a conversation about to be deleted (their rows
   * go with it): returns a function that deletes their schedules, to call
   * once the delete has happened.
   */
  async beforeOwnerDelete(
    owner: { agentId: string } | { conversationPk: string },
  ): Promise<() => Promise<void>> {
    const ids = await this.repo.idsOf(owner);
    return () => this.schedules.deleteQuietly(ids);
  }
}
