/**
 * A cron's firing, run by `cronTurnWorkflow` (its Temporal Schedule's
 * action): one turn of the cron's conversation, or of a new conversation for
 * a cron without one. The message id is the action's workflow id, which
 * names the scheduled time: a retried activity, or a repeated workflow task,
 * makes no second run.
 */
import { createHash } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import { CronsRepository } from '../../core/repositories/crons.repository.js';
import type { DeleteConversationInput } from '../../workflows/conversation-delete.definitions.js';
import { CRON_NAMESPACE, cronScheduleId, type CronTurnResult } from '../../workflows/turns.definitions.js';
import type { TurnActivityDeps, createTurnActivities } from './turn-activities.js';

/** A UUID-shaped id derived from a key: the same action names the same new conversation. */
export function derivedUuid(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function createCronActivities(
  deps: TurnActivityDeps,
  turns: Pick<ReturnType<typeof createTurnActivities>, 'startTurn'>,
) {
  const crons = new CronsRepository(deps.db);
  const conversations = new ConversationsRepository(deps.db);

  /** The schedule's next action time as the row shows it (null while paused or when none is left). */
  async function refreshNextRun(cronId: string): Promise<void> {
    if (!deps.temporal) return;
    try {
      const d = await deps.temporal.schedule.getHandle(cronScheduleId(cronId)).describe();
      await crons.setNextRunDate(cronId, d.state.paused ? null : (d.info.nextActionTimes[0] ?? null));
    } catch (err) {
      deps.logger.warn({ err, cronId }, 'could not read the cron’s next run time');
    }
  }

  return {
    /**
     * The turn of one firing. A cron deleted meanwhile (its agent or its
     * conversation deleted with it) runs nothing and its schedule goes.
     */
    async runCronTurn(args: { cronId: string; actionKey: string }): Promise<CronTurnResult> {
      const cron = await crons.findById(args.cronId);
      if (!cron) {
        await deps.temporal?.schedule
          .getHandle(cronScheduleId(args.cronId))
          .delete()
          .catch((err: unknown) => {
            if (!(err instanceof ScheduleNotFoundError)) throw err;
          });
        return { status: 'skipped', reason: 'the cron was deleted' };
      }
      const conversationId = cron.conversation_id ?? derivedUuid(args.actionKey);
      const started = await turns.startTurn({
        projectId: cron.project_id,
        agentId: cron.agent_id,
        conversationId,
        namespace: CRON_NAMESPACE,
        messageId: args.actionKey,
        content: cron.message,
        context: cron.payload.context,
        // Made through the Agent Protocol: its runs are listed there, with the cron's metadata.
        door: 'langgraph',
        source: 'cron',
        protocol: {
          assistant_id: cron.agent_id,
          metadata: cron.metadata,
          multitask_strategy: 'enqueue',
          stream_mode: ['values'],
          ...(cron.conversation_id ? {} : { stateless: true }),
          kwargs: { cron_id: cron.id, ...(cron.payload.config ? { config: cron.payload.config } : {}) },
        },
      });
      await refreshNextRun(cron.id);
      return {
        status: 'started',
        runId: started.runId,
        projectId: cron.project_id,
        conversationId,
        runStatus: started.status,
        deleteConversation: cron.conversation_id === null && cron.on_run_completed === 'delete',
      };
    },

    /** What deleting a stateless cron's conversation takes (as DELETE /conversations does); null once it is gone. */
    async cronConversationDeletion(args: {
      projectId: string;
      conversationId: string;
    }): Promise<DeleteConversationInput | null> {
      const [conversation] = await conversations.findById(args.conversationId, args.projectId);
      if (!conversation) return null;
      return {
        projectId: conversation.project_id,
        conversationPk: conversation.pk,
        conversationId: conversation.id,
        sessions: await conversations.treeSessionsOf(conversation),
      };
    },
  };
}
