/**
 * Upgrade safety for deleting conversations: histories of the deletion
 * workflow replay without a determinism error on today's code: one recorded
 * before the `delete-sub-agent-conversations` patch (the conversation alone,
 * its late spans swept), and two with its first version: a conversation
 * whose sub-agent conversations went with it (still waiting for its late
 * sweep), and one whose first delete found a sub-agent conversation it had
 * not ended, ended its session and deleted again
 * (test/fixtures/histories/README.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const dir = path.resolve(import.meta.dirname, '../../fixtures/histories');

const fixtures: Array<{ file: string; holds: string; marks: string[] }> = [
  {
    file: 'conversation-delete.bin',
    holds: 'a deletion before the patch: sessions, sandboxes, rows, a late sweep',
    marks: ['endSessions', 'removeSandboxes', 'deleteConversationData', 'sweepLateSpans', 'completed'],
  },
  {
    file: 'conversation-delete-tree.bin',
    holds: 'a conversation with its sub-agent conversations (three sessions), the sweep not yet due',
    marks: ['patch delete-sub-agent-conversations', 'endSessions', 'deleteConversationData', 'timer'],
  },
  {
    file: 'conversation-delete-sub-agent-found.bin',
    holds: 'a sub-agent conversation found at the delete: its session ended, then the delete again',
    marks: [
      'patch delete-sub-agent-conversations',
      'deleteConversationData',
      'endSessions',
      'deleteConversationData',
      'sweepLateSpans',
      'completed',
    ],
  },
];

describe('replaying histories of conversation deletions', () => {
  it.each(fixtures)(
    '$file ($holds) replays without a determinism error',
    async ({ file, marks }) => {
      const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
      expect(inOrder(eventMarks(history), marks)).toBe(true);
      await expect(
        Worker.runReplayHistory(
          { workflowsPath: require.resolve('../../../workflows/index.ts') },
          history,
          file,
        ),
      ).resolves.toBeUndefined();
    },
    60_000,
  );
});

/** Whether `marks` occur in `events` in this order (others may come between). */
function inOrder(events: string[], marks: string[]): boolean {
  let at = 0;
  for (const e of events) if (e === marks[at]) at++;
  return at === marks.length;
}

/** Activities, patches, timers and the close. */
function eventMarks(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) return [activity];
    if (e.timerStartedEventAttributes) return ['timer'];
    if (e.workflowExecutionCompletedEventAttributes) return ['completed'];
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') {
      const id = marker.details?.['patch-data']?.payloads?.[0]?.data;
      return id ? [`patch ${(JSON.parse(Buffer.from(id).toString('utf8')) as { id: string }).id}`] : [];
    }
    return [];
  });
}
