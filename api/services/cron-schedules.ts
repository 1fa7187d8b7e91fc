/**
 * The Temporal side of crons: one Schedule per cron (`cron/<id>`), whose
 * action starts `cronTurnWorkflow` on the sessions' task queue. The
 * Schedule does the timing (cron expression, time zone, end, overlap policy,
 * pause); the row only mirrors what the APIs list.
 */
import {
  isGrpcServiceError,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
} from '@temporalio/client';
import type { Config } from '../../core/config.js';
import type { CronOverlapPolicy, DbCron } from '../../core/db/tables/index.js';
import { ServiceUnavailableError, ValidationError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import {
  CRON_TURN_WORKFLOW_TYPE,
  cronScheduleId,
  type CronTurnInput,
} from '../../workflows/turns.definitions.js';

const OVERLAP: Record<CronOverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** gRPC INVALID_ARGUMENT: the server refused the cron expression (or the time zone). */
const INVALID_ARGUMENT = 3;

/** Firings missed while Temporal was away this long are still taken (once, under `skip`); older ones are dropped. */
const CATCHUP_WINDOW = '1 minute';

type ScheduleSpecOf = Pick<DbCron, 'schedule' | 'timezone' | 'end_time'>;

function specOf(cron: ScheduleSpecOf): ScheduleOptions['spec'] {
  return {
    cronExpressions: [cron.schedule],
    timezone: cron.timezone,
    ...(cron.end_time ? { endAt: cron.end_time } : {}),
  };
}

export class CronSchedules {
  constructor(
    private readonly client: Client,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  /** What a Temporal failure means to the caller: a refused expression (422/400) or Temporal away (503). */
  private refused(err: unknown, cronId: string): Error {
    // The client turns the server's "Invalid schedule spec" into a TypeError carrying the reason.
    if (err instanceof TypeError)
      return ValidationError.field(
        'schedule',
        `the schedule was refused: ${err.message}`,
        'string.pattern.base',
      );
    const cause = (err as { cause?: unknown }).cause;
    if (isGrpcServiceError(cause) && Number(cause.code) === INVALID_ARGUMENT)
      return ValidationError.field(
        'schedule',
        `the schedule was refused: ${cause.details}`,
        'string.pattern.base',
      );
    this.logger.error({ err, cronId }, 'the cron’s Temporal Schedule could not be written');
    return new ServiceUnavailableError({ temporal: 'the cron’s schedule could not be written; try again' });
  }

  async create(cron: DbCron): Promise<Date | null> {
    const input: CronTurnInput = { cronId: cron.id };
    try {
      const handle = await this.client.schedule.create({
        scheduleId: cronScheduleId(cron.id),
        spec: specOf(cron),
        action: {
          type: 'startWorkflow',
          workflowType: CRON_TURN_WORKFLOW_TYPE,
          workflowId: cronScheduleId(cron.id),
          taskQueue: this.config.temporalTaskQueue,
          args: [input],
        },
        policies: { overlap: OVERLAP[cron.overlap_policy], catchupWindow: CATCHUP_WINDOW },
        state: { paused: cron.paused, note: `cron ${cron.id} of project ${cron.project_id}` },
        memo: { project_id: cron.project_id, agent_id: cron.agent_id },
      });
      return await this.nextOf(handle.scheduleId);
    } catch (err) {
      throw this.refused(err, cron.id);
    }
  }

  /** The schedule made to match the row's timing, overlap policy and pause. */
  async update(cron: DbCron): Promise<Date | null> {
    const handle = this.client.schedule.getHandle(cronScheduleId(cron.id));
    try {
      await handle.update((prev) => ({
        ...prev,
        spec: specOf(cron),
        policies: { ...prev.policies, overlap: OVERLAP[cron.overlap_policy] },
        state: { ...prev.state, paused: cron.paused },
      }));
      return await this.nextOf(handle.scheduleId);
    } catch (err) {
      throw this.refused(err, cron.id);
    }
  }

  async setPaused(cronId: string, paused: boolean): Promise<Date | null> {
    const handle = this.client.schedule.getHandle(cronScheduleId(cronId));
    try {
      if (paused) await handle.pause('paused through the API');
      else await handle.unpause('resumed through the API');
      return await this.nextOf(handle.scheduleId);
    } catch (err) {
      throw this.refused(err, cronId);
    }
  }

  /** Gone already is fine; Temporal away is a 503 (the row stays, so the delete can be repeated). */
  async delete(cronId: string): Promise<void> {
    try {
      await this.client.schedule.getHandle(cronScheduleId(cronId)).delete();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return;
      throw this.refused(err, cronId);
    }
  }

  deleteQuietly(cronIds: string[]): Promise<void> {
    return deleteCronSchedules(this.client, cronIds, this.logger);
  }

  private async nextOf(scheduleId: string): Promise<Date | null> {
    const d = await this.client.schedule.getHandle(scheduleId).describe();
    return d.state.paused ? null : (d.info.nextActionTimes[0] ?? null);
  }
}

/**
 * Best effort, for crons deleted with their agent or conversation (their
 * rows cascade): a schedule left behind deletes itself at its next firing,
 * when the worker finds no cron.
 */
export async function deleteCronSchedules(client: Client, cronIds: string[], logger?: Logger): Promise<void> {
  for (const id of cronIds)
    await client.schedule
      .getHandle(cronScheduleId(id))
      .delete()
      .catch((err: unknown) => {
        if (!(err instanceof ScheduleNotFoundError))
          logger?.warn({ err, cronId: id }, 'the cron’s schedule is left to delete itself');
      });
}
