import { TERMINAL_EVENTS } from '../../../core/db/tables/index.js';
import type { RunEvent } from '../../../core/repositories/run-events.repository.js';
import type { ConverseService } from '../../services/converse.service.js';

/** How following a turn ended: the run ended, paused, the wait ran out, or the caller left. */
export type Followed = 'ended' | 'paused' | 'timeout' | 'aborted';

/** The events that tell of a step of the turn (deltas and a tool's own progress are too many to send). */
const STEP_EVENTS: ReadonlySet<string> = new Set([
  'run.created',
  'run.started',
  'tool_call.created',
  'tool_call.completed',
  'message.completed',
  'run.paused',
  'run.resumed',
  ...TERMINAL_EVENTS,
]);

/** A step in words, for a progress notification's `message`. */
export function stepMessage(ev: RunEvent): string | undefined {
  if (!STEP_EVENTS.has(ev.type)) return undefined;
  const d = ev.data;
  const name = typeof d.name === 'string' ? d.name : 'a tool';
  switch (ev.type) {
    case 'tool_call.created':
      return `calling ${name}`;
    case 'tool_call.completed':
      return `${name} answered`;
    case 'message.completed':
      return 'the model answered';
    case 'run.paused':
      return 'waiting for someone';
    default:
      return ev.type.replace('run.', 'turn ');
  }
}

/**
 * Follows the run's events after `afterSeq` until it ends or pauses, at
 * most `timeoutMs`, telling `onStep` of each step. The turn is durable: a
 * caller that leaves stops only this wait.
 */
export async function followTurn(
  converse: ConverseService,
  runId: string,
  afterSeq: number,
  opts: {
    timeoutMs: number;
    signal: AbortSignal;
    onStep: (ev: RunEvent, message: string) => Promise<void>;
    /** Whether the run still waits: a pause read back from its log may have been decided since. */
    stillPaused: () => Promise<boolean>;
  },
): Promise<Followed> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const timer = setTimeout(stop, opts.timeoutMs);
  opts.signal.addEventListener('abort', stop);
  try {
    for await (const ev of converse.events(runId, afterSeq, controller.signal)) {
      const message = stepMessage(ev);
      if (message !== undefined) await opts.onStep(ev, message).catch(() => undefined);
      if (TERMINAL_EVENTS.has(ev.type)) return 'ended';
      if (ev.type === 'run.paused' && (await opts.stillPaused())) return 'paused';
    }
    return opts.signal.aborted ? 'aborted' : 'timeout';
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', stop);
  }
}
