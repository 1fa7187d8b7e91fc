import { once } from 'node:events';
import type { Context } from 'koa';
import { TERMINAL_EVENTS } from '../../../core/db/tables/index.js';
import { openEventStream } from '../../http/sse.js';
import { parseEventId, RunStreamRenderer, type Frame } from './run-stream.js';
import type { StreamMode } from './runs.schemas.js';
import type { DoorServices } from './services.js';
import { interruptsOf } from './threads.js';
import type { ThreadRow } from '../../../core/repositories/protocol-threads.repository.js';

const KEEPALIVE_MS = 15_000;

export interface StreamRequest {
  projectId: string;
  runId: string;
  thread: ThreadRow;
  assistantId: string;
  modes: StreamMode[];
  /** Follow the run's events after this one (a resumed run: after its pause). */
  afterSeq: number;
  /** The client's Last-Event-ID: frames up to it are not sent again (`-1`: everything). */
  lastEventId?: string;
  /** Cancel the run (interrupt) when the client leaves before it ends. */
  cancelOnDisconnect: boolean;
  headers?: Record<string, string>;
}

const write = (f: Frame) => `id: ${f.id}\nevent: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`;

const after = (f: Frame, at: [number, number]): boolean => {
  const [seq, n] = f.id.split('-').map(Number) as [number, number];
  return seq > at[0] || (seq === at[0] && n > at[1]);
};

/**
 * A run's stream in the protocol's modes, until the run ends or pauses. Every
 * frame has an id; with Last-Event-ID the stream is rendered from the start
 * (so accumulated messages stay whole) and only later frames are sent. A
 * client that leaves stops its own stream; the run goes on unless asked.
 */
export async function streamProtocolRun(ctx: Context, door: DoorServices, req: StreamRequest): Promise<void> {
  const res = openEventStream(ctx, req.headers);
  const controller = new AbortController();
  let ended = false;
  const gone = () => controller.abort();
  res.once('close', gone);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const resumeAt = parseEventId(req.lastEventId);
  const renderer = new RunStreamRenderer(new Set(req.modes), {
    runId: req.runId,
    threadId: req.thread.id,
    assistantId: req.assistantId,
    values: () => door.views.values(req.thread),
    interrupts: async () => {
      const run = await door.repo.findRun(req.projectId, req.runId);
      return run ? interruptsOf(run) : [];
    },
  });
  const send = async (frames: Frame[]) => {
    for (const f of frames) {
      if (resumeAt && !after(f, resumeAt)) continue;
      if (!res.write(write(f))) await once(res, 'drain', { signal: controller.signal });
    }
  };
  try {
    await send(await renderer.start());
    for await (const ev of door.converse.events(req.runId, req.afterSeq, controller.signal)) {
      await send(await renderer.render(ev));
      if (TERMINAL_EVENTS.has(ev.type)) ended = true;
      if (ev.type === 'run.paused' || ended) break;
    }
  } catch (err) {
    if (!controller.signal.aborted)
      ctx.state.log.error({ err, runId: req.runId }, 'protocol run stream failed');
  } finally {
    clearInterval(keepalive);
    res.off('close', gone);
    if (!res.destroyed) res.end();
  }
  if (controller.signal.aborted && req.cancelOnDisconnect && !ended)
    await door.cancels.cancel(req.runId, req.projectId, 'interrupt').catch((err: unknown) => {
      ctx.state.log.warn({ err, runId: req.runId }, 'could not cancel the run its client left');
    });
}
