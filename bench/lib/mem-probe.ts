/**
 * Preloaded into a benchmarked server (`spawnServer(…, { probe: true })`):
 * answers the parent's IPC messages with the process's memory figures, after
 * an optional full GC, and writes heap snapshots. Benchmarks only; nothing in
 * the product imports it.
 */
import { setFlagsFromString, getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { runInNewContext } from 'node:vm';

export interface ProbeRequest {
  id: number;
  op: 'mem' | 'snapshot' | 'profile-start' | 'profile-stop';
  /** mem: run a full (major) GC first, so heapUsed is the live heap. */
  gc?: boolean;
  /** snapshot, profile-stop: the file to write. */
  file?: string;
}

export interface MemFigures {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** V8's limit for the whole heap (old space + young + code…). */
  heapLimit: number;
  /** Committed bytes per V8 space. */
  spaces: Record<string, { size: number; used: number }>;
  gcMs?: number;
}

// `gc` without --expose-gc on the command line: the flags the server runs with stay as they are.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (opts?: { type: 'major'; execution: 'sync' }) => void;

// A CPU profile of a chosen stretch (start-up excluded), through the in-process inspector.
const session = new Session();
session.connect();
const post = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
  );

process.on('message', (msg: ProbeRequest) => {
  if (msg.op === 'profile-start') {
    void post('Profiler.enable')
      .then(() => post('Profiler.start'))
      .then(() => process.send?.({ id: msg.id }));
    return;
  }
  if (msg.op === 'profile-stop') {
    void post('Profiler.stop').then((r) => {
      writeFileSync(msg.file!, JSON.stringify((r as { profile: unknown }).profile));
      process.send?.({ id: msg.id, file: msg.file });
    });
    return;
  }
  if (msg.op === 'snapshot') {
    const file = writeHeapSnapshot(msg.file);
    process.send?.({ id: msg.id, file });
    return;
  }
  let gcMs: number | undefined;
  if (msg.gc) {
    const t = performance.now();
    gc();
    gcMs = performance.now() - t;
  }
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
  );
  const figures: MemFigures = {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    heapLimit: getHeapStatistics().heap_size_limit,
    spaces,
    ...(gcMs !== undefined ? { gcMs } : {}),
  };
  process.send?.({ id: msg.id, figures });
});
// The IPC channel must not keep a stopping server alive.
process.channel?.unref();
