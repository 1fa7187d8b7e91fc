/**
 * A process's CPU time in nanoseconds, from each thread's
 * `/proc/<pid>/task/<tid>/schedstat` (its first field: time on a CPU). The
 * `stat` files that bench/lib/proc-cpu.ts reads count 10 ms ticks, coarser
 * than one agent turn's few milliseconds of API work; schedstat is exact.
 */
import { readdirSync, readFileSync } from 'node:fs';

const onCpuNs = (file: string): number => {
  try {
    return Number(readFileSync(file, 'utf8').split(' ')[0]);
  } catch {
    return 0; // the thread ended meanwhile
  }
};

/** Nanoseconds on a CPU so far: every thread of the process, and its main thread (where its JavaScript runs). */
export function taskCpuNs(pid: number): { all: number; main: number } {
  let all = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) all += onCpuNs(`/proc/${pid}/task/${tid}/schedstat`);
  return { all, main: onCpuNs(`/proc/${pid}/task/${pid}/schedstat`) };
}
