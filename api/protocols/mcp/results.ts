import type { CallToolResult } from '@modelcontextprotocol/server';
import type { RunView } from '../../../core/runs/run-view.js';

/** The `_meta` key under which a result names its run and conversation (to continue it, or to look it up). */
export const TURN_META = 'agent-server/turn';

/** Where a person decides a paused run: the console's waiting page, on PUBLIC_URL (or the address called). */
export function consoleLink(base: string): string {
  return `${base.replace(/\/$/, '')}/console/waiting`;
}

const text = (t: string) => ({ type: 'text' as const, text: t });

function meta(view: RunView): Record<string, unknown> {
  return {
    [TURN_META]: {
      run_id: view.run_id,
      conversation_id: view.conversation_id,
      status: view.status,
      ...(view.pause ? { pause: view.pause } : {}),
    },
  };
}

/** A call in a sentence: `name({"arg":1})`. */
export function callText(call: Record<string, unknown>): string {
  const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
  return `${typeof call.name === 'string' ? call.name : 'a tool'}(${args})`;
}

/** What the paused run waits on, as a person reads it. */
export function pauseText(view: RunView): string {
  if (view.status === 'awaiting_approval')
    return `approval of ${view.pending_approvals.map(callText).join(', ') || 'a tool call'}`;
  return (view.pause?.reason ?? view.status.replace('awaiting_', '')) + ' (see the run)';
}

/**
 * The turn as a tool result. An answer is its text, with `structuredContent`
 * when the agent has a schema; anything short of an answer (a failure, a
 * cancellation, a pause, a turn still running) is `isError`, saying why and
 * where to follow it: a tool with an output schema must otherwise carry
 * structured content, and the caller's model should not take it as the answer.
 */
export function turnResult(
  view: RunView,
  opts: { structured: boolean; consoleBase: string },
): CallToolResult {
  const _meta = meta(view);
  switch (view.status) {
    case 'completed': {
      const answer = view.output?.content ?? '';
      const structured = view.output?.structured;
      if (!opts.structured) return { content: [text(answer)], _meta };
      if (structured !== null && typeof structured === 'object' && !Array.isArray(structured))
        return { content: [text(answer)], structuredContent: structured, _meta };
      return {
        content: [text(`The agent's answer did not match its schema: ${answer}`)],
        isError: true,
        _meta,
      };
    }
    case 'failed':
      return {
        content: [text(`The agent's turn failed: ${view.error?.message ?? 'unknown error'}`)],
        isError: true,
        _meta,
      };
    case 'cancelled':
      return { content: [text("The agent's turn was cancelled.")], isError: true, _meta };
    case 'queued':
    case 'running':
      return {
        content: [
          text(
            `The agent's turn is still running (run ${view.run_id}); its answer will be in conversation ` +
              `"${view.conversation_id}".`,
          ),
        ],
        isError: true,
        _meta,
      };
    default:
      return {
        content: [
          text(
            `The agent's turn is paused, waiting for ${pauseText(view)}. Decide in the console: ` +
              `${consoleLink(opts.consoleBase)} (run ${view.run_id})` +
              (view.status === 'awaiting_approval'
                ? `, or POST /api/agent-server/runs/${view.run_id}/approvals`
                : '') +
              `. Its answer will be in conversation "${view.conversation_id}".`,
          ),
        ],
        isError: true,
        _meta,
      };
  }
}

/** A call refused before any turn started (bad arguments): the protocol's tool error, naming the field. */
export function argumentError(problem: string): CallToolResult {
  return { content: [text(`Invalid arguments: ${problem}`)], isError: true };
}
