/**
 * An MCP server's progress notifications during a call, as run events
 * (`tool_call.progress {step, id, name, progress, total?, message?}`) for
 * readers of the run's stream. At most one every PROGRESS_EVENT_MS: a server
 * may notify far faster than anyone reads, and each event is a row.
 */
import type { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import type { McpProgress } from '../tools/mcp-tools.js';

export const PROGRESS_EVENT_MS = 250;

export function progressEvents(
  events: RunEventsRepository,
  runId: string,
  call: { step: number; id: string; name: string },
  onError: (err: unknown) => void,
): (p: McpProgress) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    if (now - last < PROGRESS_EVENT_MS) return;
    last = now;
    events.append(runId, 'tool_call.progress', { ...call, ...p }).catch(onError);
  };
}
