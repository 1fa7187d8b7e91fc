/**
 * Upgrade safety for today's turn shapes: session workflow histories recorded
 * by the session integration tests just before the workflow was split into
 * workflows/session/ replay without a determinism error on
 * today's workflow code. Each covers a path the older fixture
 * (replay.test.ts) does not: per-call tool activities, approval pauses
 * (decided, timed out, on a sandbox command), the iteration cap,
 * summarization and continue-as-new; and, recorded with the `run-cancel`
 * patch, runs cancelled mid-stream and while awaiting approval; and, with
 * the `budget-wait` and `tool-decision` patches, runs that waited for budget
 * and for a decision on a tool call; and, with the `mcp-input` patch, MCP
 * calls that waited for a person's answer to the server's question; and,
 * with the `mcp-authorization` patch, listings that waited for an MCP
 * server's OAuth authorization; and, with the `mcp-tasks` patch, MCP calls
 * their server ran as tasks, polled on durable timers
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

/** Each fixture, with the events that show it holds what it claims. */
const fixtures: Array<{ file: string; holds: string; marks: string[] }> = [
  {
    file: 'session-approval-rejected.bin',
    holds: 'an MCP call paused for approval and rejected, another run',
    marks: ['listTools', 'update approve', 'answerToolCalls', 'runMcpTool'],
  },
  {
    file: 'session-approval-timeout.bin',
    holds: "calls declined by the agent's approval timeout",
    marks: ['pauseForApproval', 'timer fired', 'answerToolCalls'],
  },
  {
    file: 'session-sandbox-approval.bin',
    holds: 'a sandbox command waiting for approval, then run',
    marks: ['update approve', 'runSandboxCommand'],
  },
  {
    file: 'session-max-iterations.bin',
    holds: 'an invalid call answered, then the iteration cap',
    marks: ['answerToolCalls', 'runToolCalls', 'finishTurn'],
  },
  { file: 'session-summarize.bin', holds: 'a turn that summarizes first', marks: ['summarizeHistory'] },
  {
    file: 'session-continue-as-new.bin',
    holds: 'a run ending in continue-as-new',
    marks: ['continued as new'],
  },
  {
    file: 'session-cancel-streaming.bin',
    holds: 'a run cancelled while its model call streamed, then a turn',
    marks: ['update cancelRun', 'activity cancelled', 'cancelTurn', 'callModel'],
  },
  {
    file: 'session-cancel-approval.bin',
    holds: 'a run cancelled while it awaited approval, then a turn',
    marks: ['pauseForApproval', 'update cancelRun', 'cancelTurn', 'listTools'],
  },
  {
    file: 'session-budget-resumed.bin',
    holds: 'a run waiting for budget, woken by resumeBudget, then its model call',
    marks: ['pauseRun', 'update resumeBudget', 'resumeRun', 'callModel'],
  },
  {
    file: 'session-budget-timeout.bin',
    holds: "a run waiting for budget, cancelled by the agent's budget_wait_timeout_ms",
    marks: ['pauseRun', 'timer fired', 'cancelTurn'],
  },
  {
    file: 'session-budget-cancelled.bin',
    holds: 'a run waiting for budget, cancelled by a person',
    marks: ['pauseRun', 'update cancelRun', 'cancelTurn'],
  },
  {
    file: 'session-decision-supplied.bin',
    holds: "an MCP call whose outcome was unknown, answered with a person's result",
    marks: ['runMcpTool', 'pauseRun', 'update decideToolCall', 'resumeRun', 'answerToolCalls'],
  },
  {
    file: 'session-decision-retried.bin',
    holds: 'an MCP call whose outcome was unknown, called again on a decision',
    marks: ['pauseRun', 'update decideToolCall', 'resumeRun', 'runMcpTool'],
  },
  {
    file: 'session-decision-timeout.bin',
    holds: "an MCP call whose outcome was unknown, failed by the agent's decision_timeout_ms",
    marks: ['pauseRun', 'timer fired', 'resumeRun', 'answerToolCalls'],
  },
  {
    file: 'session-input-answered.bin',
    holds: "an MCP call that stopped waiting for a person's answer, answered by answerInput, then made again",
    marks: ['runMcpTool', 'pauseRun', 'update answerInput', 'resumeRun'],
  },
  {
    file: 'session-input-timeout.bin',
    holds:
      "an MCP call waiting for a person's answer, declined by the agent's input_timeout_ms, then made again",
    marks: ['runMcpTool', 'pauseRun', 'timer fired', 'resumeRun'],
  },
  {
    file: 'session-authorization-resumed.bin',
    holds:
      "a turn's listing that waited for an MCP server's authorization, woken by resumeAuthorization, then listed again",
    marks: ['listTools', 'pauseRun', 'update resumeAuthorization', 'resumeRun'],
  },
  {
    file: 'session-authorization-timeout.bin',
    holds:
      "a turn's listing that waited for an MCP server's authorization past the agent's authorization_timeout_ms, then listed again without it",
    marks: ['listTools', 'pauseRun', 'timer fired', 'resumeRun'],
  },
  {
    file: 'session-task-completed.bin',
    holds: 'an MCP call its server ran as a task, polled after durable timers until it completed',
    marks: ['runMcpTool', 'timer fired', 'pollMcpTask', 'callModel'],
  },
  {
    file: 'session-task-cancelled.bin',
    holds:
      'an MCP call run as a task, the run cancelled while it was polled: the task cancelled on its server',
    marks: ['runMcpTool', 'pollMcpTask', 'update cancelRun', 'cancelMcpTask', 'cancelTurn'],
  },
];

describe('session workflow: replaying histories of per-call tools, approvals and the life cycle', () => {
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

/** Activity types (local ones from their markers), accepted Update names, fired timers, cancelled activities, continue-as-new. */
function eventMarks(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) return [activity];
    const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    if (update) return [`update ${update}`];
    if (e.timerFiredEventAttributes) return ['timer fired'];
    if (e.activityTaskCanceledEventAttributes) return ['activity cancelled'];
    if (e.workflowExecutionContinuedAsNewEventAttributes) return ['continued as new'];
    const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    if (data)
      return [
        (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type ?? '',
      ];
    return [];
  });
}
