/** CPU time from /proc (Linux): a process, its main thread, every PostgreSQL process. */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds from a /proc stat file: utime + stime, plus cutime + cstime (the
 * children it has waited for) when `withChildren`; 0 when the process is gone.
 */
export function statCpuSeconds(file: string, withChildren = false): number {
  try {
    const stat = readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(f[11]) + Number(f[12]);
    return (withChildren ? own + Number(f[13]) + Number(f[14]) : own) / 100; // clock ticks (USER_HZ = 100)
  } catch {
    return 0; // the process ended meanwhile
  }
}

/** CPU seconds used so far by a process. */
export const cpuSeconds = (pid: number) => statCpuSeconds(`/proc/${pid}/stat`);

/**
 * CPU seconds of a process's main thread: a Node server's JavaScript runs
 * there, so with its core busy that thread, not the whole process (whose GC
 * helper threads run on the other core), bounds the throughput.
 */
export const mainThreadCpuSeconds = (pid: number) => statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);

/**
 * CPU seconds of every PostgreSQL process: the span and usage inserts cost the
 * database too. A backend that exits during a cell (a pool's idle connection
 * closed) would take its CPU out of the sum, even making it negative, so the
 * CPU of exited children, which the postmaster collects (cutime + cstime), is
 * counted as well.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += statCpuSeconds(`/proc/${pid}/stat`, true);
    } catch {
      // gone
    }
  }
  return total;
}
