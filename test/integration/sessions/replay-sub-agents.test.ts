/**
 * Upgrade safety for sub-agent calls: histories recorded by
 * sub-agents.test.ts with the `sub-agents` patch's first version replay
 * without a determinism error on today's workflow code: a session turn that
 * called a sub-agent (a child workflow per call) and used its answer; one
 * cancelled with `rollback` while the sub-agent answered (the child told by
 * a signal, waited for, then `cancelTurn`); and the call's own workflow in
 * both cases (test/fixtures/histories/README.md).
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
    file: 'session-sub-agent.bin',
    holds: 'a turn that called a sub-agent and answered with what it said',
    marks: ['patch sub-agents', 'child subAgentCallWorkflow', 'child completed', 'callModel'],
  },
  {
    file: 'session-sub-agent-cancelled.bin',
    holds: 'a turn cancelled (rollback) while its sub-agent answered',
    marks: ['child subAgentCallWorkflow', 'update cancelRun', 'signal cancelSubAgentCall', 'cancelTurn'],
  },
  {
    file: 'sub-agent-call.bin',
    holds: 'a sub-agent call: the run started, its end awaited, its answer stored',
    marks: ['startSubAgentTurn', 'awaitRunEnd', 'answerSubAgentCall'],
  },
  {
    file: 'sub-agent-call-cancelled.bin',
    holds: "a sub-agent call told to cancel: the run cancelled the caller's way",
    marks: ['startSubAgentTurn', 'awaitRunEnd', 'signaled cancelSubAgentCall', 'cancelSubAgentRun'],
  },
];

describe('replaying histories of sub-agent calls', () => {
  it.each(fixtures)(
    '$file ($holds) replays without a determinism error',
    async ({ file, marks }) => {
      const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
      expect(eventMarks(history)).toEqual(expect.arrayContaining(marks));
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

/** Activities (local ones from their markers), patches, children, signals and accepted Updates. */
function eventMarks(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) return [activity];
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name;
    if (child) return [`child ${child}`];
    if (e.childWorkflowExecutionCompletedEventAttributes) return ['child completed'];
    const signal = e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName;
    if (signal) return [`signal ${signal}`];
    const signaled = e.workflowExecutionSignaledEventAttributes?.signalName;
    if (signaled) return [`signaled ${signaled}`];
    const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    if (update) return [`update ${update}`];
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.details?.data?.payloads?.[0]?.data;
    if (marker?.markerName === 'core_patch') {
      const id = marker.details?.['patch-data']?.payloads?.[0]?.data;
      return id ? [`patch ${(JSON.parse(Buffer.from(id).toString('utf8')) as { id: string }).id}`] : [];
    }
    if (data)
      return [
        (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type ?? '',
      ];
    return [];
  });
}
