/**
 * The target "no memory growth over a 60-second run" (bench/RESULTS.md): 64
 * connections through one key for a while after a warm-up, sampling each API
 * process's memory every 5 s from inside the process (RSS, V8 heap
 * used/committed, external). The live heap is measured after a forced full GC
 * at the start and the end (a leak shows there); RSS growth is the
 * least-squares slope over the samples.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadResult, Target } from '../lib/gateway-targets.js';
import type { Child } from '../lib/scratch.js';

const MiB = (b: number) => b / 2 ** 20;
const fmt = (b: number) => MiB(b).toFixed(0);

export interface SoakOptions {
  /** The API processes to soak one after the other; `target.url` is rewritten from `baseUrl` to each one's. */
  servers: Array<{ name: string; child: Child }>;
  baseUrl: string;
  /** c=64, non-streaming load on one target for `seconds`. */
  load(t: Target, seconds: number): Promise<LoadResult>;
  seconds: number;
  /** Load before the first figures: pools, JIT and caches settle. */
  warmupSeconds: number;
  /** Idle time before the live heap is measured (post-GC) at the start and end. */
  restMs: number;
  /** A folder: heap snapshots of the `traced` server at the start and end (diff with bench/lib/heap-diff.ts). */
  snapshots: string | undefined;
  /** Node flags of the API processes, printed with the figures. */
  nodeArgs: string[];
}

/** Least-squares slope of ys over xs. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

interface Sample {
  s: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export async function soak(t: Target, o: SoakOptions): Promise<void> {
  for (const { name, child } of o.servers) {
    const target = { ...t, url: t.url.replace(o.baseUrl, child.url) };
    if (o.warmupSeconds > 0) await o.load(target, o.warmupSeconds);
    // Requests still being settled when the load stops are not retained memory: let them finish.
    await sleep(o.restMs);
    const before = await child.mem(true);
    if (o.snapshots && name === 'traced') await child.heapSnapshot(`${o.snapshots}/soak-start.heapsnapshot`);
    const samples: Sample[] = [];
    const started = performance.now();
    const sample = async () => {
      const m = await child.mem(false);
      samples.push({
        s: (performance.now() - started) / 1000,
        rss: m.rss,
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
      });
    };
    await sample();
    const timer = setInterval(() => void sample(), 5_000);
    const soaked = await o.load(target, o.seconds);
    clearInterval(timer);
    await sample();
    await sleep(o.restMs);
    const after = await child.mem(true);
    if (o.snapshots && name === 'traced') await child.heapSnapshot(`${o.snapshots}/soak-end.heapsnapshot`);
    console.log(
      `\nsoak (${name}): ${o.seconds}s at 64 connections through the limited key after ${o.warmupSeconds}s of warm-up: ` +
        `${Math.round(soaked.rps)} req/s, ${soaked.errors} errors; heap limit ${fmt(before.heapLimit)} MiB`,
    );
    report(samples, before, after, o);
  }
}

/** The samples, RSS growth over the soak and its last 60 s, and the live heap at both ends. */
function report(
  samples: Sample[],
  before: Awaited<ReturnType<Child['mem']>>,
  after: Awaited<ReturnType<Child['mem']>>,
  o: SoakOptions,
): void {
  const rssSlope = slope(
    samples.map((x) => x.s / 60),
    samples.map((x) => MiB(x.rss)),
  );
  const first = samples[0]!;
  const last = samples.at(-1)!;
  console.log(
    `  RSS MiB every 5 s: ${samples.map((x) => fmt(x.rss)).join(' ')}\n` +
      `  heap committed:    ${samples.map((x) => fmt(x.heapTotal)).join(' ')}\n` +
      `  heap used:         ${samples.map((x) => fmt(x.heapUsed)).join(' ')}\n` +
      `  external:          ${samples.map((x) => fmt(x.external)).join(' ')}`,
  );
  // The last 60 s of the soak (all of it when shorter).
  const tail = samples.filter((x) => x.s >= last.s - 60);
  const tailGrowth = MiB(last.rss - tail[0]!.rss);
  const tailSlope = slope(
    tail.map((x) => x.s / 60),
    tail.map((x) => MiB(x.rss)),
  );
  console.log(
    `  RSS start ${fmt(first.rss)} → end ${fmt(last.rss)} MiB, ${rssSlope.toFixed(1)} MiB/min over the soak (least squares); ` +
      `last ${Math.round(last.s - tail[0]!.s)} s: ${fmt(tail[0]!.rss)} → ${fmt(last.rss)} MiB ` +
      `(${tailGrowth >= 0 ? '+' : ''}${tailGrowth.toFixed(1)} MiB, ${tailSlope.toFixed(1)} MiB/min)\n` +
      `  live heap after a full GC: start ${MiB(before.heapUsed).toFixed(1)} → end ${MiB(after.heapUsed).toFixed(1)} MiB ` +
      `(${((MiB(after.heapUsed) - MiB(before.heapUsed)) / (o.seconds / 60)).toFixed(1)} MiB/min); ` +
      `external ${fmt(before.external)} → ${fmt(after.external)} MiB; node flags: ${o.nodeArgs.join(' ') || 'none'}`,
  );
}
