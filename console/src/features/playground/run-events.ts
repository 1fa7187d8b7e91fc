/**
 * A run's events live in the query cache under runEventsKey(runId), each once
 * (by its `id:`). The query streams them: from the converse answer itself when
 * this page just sent the message, else from GET /runs/{run_id}/events with
 * `Last-Event-ID` = the last event the cache holds. So leaving the page (the
 * stream stops, the turn goes on) and coming back resumes where it stopped,
 * and no text is shown twice. Stopping a turn cancels its run on the server
 * (queries.ts `useCancel`): the stream then ends with `run.cancelled`.
 */
import {
  experimental_streamedQuery as streamedQuery,
  useQuery,
  type QueryClient,
} from '@tanstack/react-query';
import { ApiError } from '../../api/client.js';
import type { SseFrame } from './sse.js';
import { openSse } from './sse.js';
import { TERMINAL, type RunEvent } from './transcript.js';

export interface RunEvents {
  events: RunEvent[];
  lastSeq: number;
  /** The terminal event has arrived: nothing more will come. */
  ended: boolean;
}

export const EMPTY: RunEvents = { events: [], lastSeq: 0, ended: false };
export const runEventsKey = (runId: string) => ['playground', 'run-events', runId] as const;

/** Adds an event unless it was already seen (a resumed stream starts after the last one anyway). */
export function addEvent(acc: RunEvents, ev: RunEvent): RunEvents {
  if (ev.seq <= acc.lastSeq) return acc;
  return {
    ...acc,
    events: [...acc.events, ev],
    lastSeq: ev.seq,
    ended: acc.ended || TERMINAL.has(ev.type),
  };
}

export function toEvent(f: SseFrame): RunEvent | undefined {
  const seq = Number(f.id);
  if (!Number.isInteger(seq)) return undefined;
  try {
    return { seq, type: f.event, data: JSON.parse(f.data) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

interface Handoff {
  frames: AsyncGenerator<SseFrame>;
  abort: () => void;
  timer: ReturnType<typeof setTimeout>;
}
/** Converse answers whose stream the run's query has not taken over yet (not a cache: open connections). */
const handoffs = new Map<string, Handoff>();

/** The rest of a converse answer's stream, for the run's query to read on. */
export function handOff(runId: string, frames: AsyncGenerator<SseFrame>, abort: () => void): void {
  // Nobody took it (the page was left at once): close it; the query resumes from the API later.
  const timer = setTimeout(() => {
    if (handoffs.get(runId)?.frames === frames) handoffs.delete(runId);
    abort();
  }, 30_000);
  handoffs.set(runId, { frames, abort, timer });
}

function takeHandoff(runId: string): Handoff | undefined {
  const h = handoffs.get(runId);
  if (h) {
    clearTimeout(h.timer);
    handoffs.delete(runId);
  }
  return h;
}

/** How to stop the stream a run's query is reading now (one per run): a new reader replaces the old. */
const following = new Map<string, AbortController>();

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Follows a run until its terminal event: reconnects after a stream that
 * ended early (the converse answer ends at `run.paused`; a network drop) from
 * the last event held. A 4xx is final; other failures are retried a few times.
 */
async function* follow(
  runId: string,
  projectId: string,
  client: QueryClient,
  querySignal: AbortSignal,
): AsyncGenerator<RunEvent> {
  const stop = new AbortController();
  following.get(runId)?.abort();
  following.set(runId, stop);
  try {
    yield* read(runId, projectId, client, AbortSignal.any([querySignal, stop.signal]));
  } finally {
    if (following.get(runId) === stop) following.delete(runId);
  }
}

async function* read(
  runId: string,
  projectId: string,
  client: QueryClient,
  signal: AbortSignal,
): AsyncGenerator<RunEvent> {
  let failures = 0;
  while (!signal.aborted) {
    const held = client.getQueryData<RunEvents>(runEventsKey(runId)) ?? EMPTY;
    if (held.ended) return;
    const handoff = takeHandoff(runId);
    let received = 0;
    try {
      let frames: AsyncGenerator<SseFrame>;
      if (handoff) {
        signal.addEventListener('abort', handoff.abort, { once: true });
        frames = handoff.frames;
      } else {
        const url = `/api/agent-server/runs/${encodeURIComponent(runId)}/events?project_id=${encodeURIComponent(projectId)}`;
        const headers: Record<string, string> = held.lastSeq ? { 'last-event-id': String(held.lastSeq) } : {};
        frames = await openSse(url, { headers, signal });
      }
      for await (const f of frames) {
        if (signal.aborted) return; // replaced or left: frames already buffered are not shown
        const ev = toEvent(f);
        if (!ev) continue;
        received++;
        failures = 0;
        yield ev;
        if (TERMINAL.has(ev.type)) return;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) throw err;
      if (++failures > 5) throw err;
    }
    // A stream that ended with news (a pause) reconnects at once; otherwise back off.
    if (received === 0 || failures > 0) await sleep(Math.min(500 * 2 ** failures, 8_000), signal);
  }
}

/** The run's events so far, streaming until its end; shared by every component that asks. */
export function useRunEvents(runId: string | undefined, projectId: string | undefined) {
  return useQuery({
    queryKey: runEventsKey(runId ?? ''),
    enabled: Boolean(runId && projectId),
    queryFn: streamedQuery<RunEvent, RunEvents>({
      streamFn: (ctx) => follow(runId!, projectId!, ctx.client, ctx.signal),
      refetchMode: 'append',
      reducer: addEvent,
      initialValue: EMPTY,
    }),
    // An ended run never changes; a live one resumes (Last-Event-ID) whenever it is shown again.
    staleTime: (q) => (q.state.data?.ended ? Infinity : 0),
    gcTime: 30 * 60_000,
    retry: false,
    refetchOnWindowFocus: false,
  });
}
