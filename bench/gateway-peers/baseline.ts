/**
 * An A/B of a change inside bench/gateway-peers: BENCH_BASELINE_CHECKOUT names
 * another checkout of this repository (e.g. `git worktree add /tmp/base
 * <commit>` then `npm ci` there), whose api/server.ts runs beside ours as the
 * target `baseline`, on a scratch database of its own (migrated by this
 * checkout: the change must not add a migration) with the same settings,
 * key and request. It joins every cell and round, so the A/B is
 * read in the same ABBA blocks as the rest: added latency at c=1 (ours −
 * baseline, per round), CPU per request at c=1 and c=64, throughput.
 */
import path from 'node:path';
import { apiNodeArgs, GATEWAY_PATH, median, setupGatewayKeys, type Target } from '../lib/gateway-targets.js';
import { scratchDatabase, spawnServer } from '../lib/scratch.js';
import { abbaRatio, list, signed } from './summary.js';

export const BASELINE_CHECKOUT = process.env.BENCH_BASELINE_CHECKOUT;

/** The baseline checkout's API on its own scratch database, as a target through a key with no limits. */
export async function startBaseline(
  checkout: string,
  vendorUrl: string,
  ours: Target,
): Promise<{ target: Target; stop(): Promise<void> }> {
  const scratch = await scratchDatabase('agent_bench_peers_base');
  const api = await spawnServer(
    path.join(path.resolve(checkout), 'api/server.ts'),
    { DATABASE_URL: scratch.url, TEMPORAL_ADDRESS: '127.0.0.1:1', LOG_LEVEL: 'error' },
    { nodeArgs: apiNodeArgs() },
  );
  const { plain } = await setupGatewayKeys(api.url, vendorUrl);
  return {
    target: {
      ...ours,
      name: 'baseline',
      pid: api.proc.pid!,
      url: `${api.url}${GATEWAY_PATH}`,
      headers: { ...ours.headers, authorization: `Bearer ${plain}` },
    },
    async stop() {
      await api.stop();
      await scratch.drop();
    },
  };
}

/** Per round, per target: c=1 time per request and server CPU; c=64 req/s and server CPU. */
export interface AbCells {
  seqMs: number[];
  seqCpuUs: number[];
  rps: number[];
  cpuUs: number[];
}

/** ours against the baseline checkout, every figure from the same rounds. */
export function printAb(mode: string, ours: AbCells, base: AbCells): void {
  const diff = ours.seqMs.map((x, r) => x - base.seqMs[r]!);
  // ABBA blocks of the difference: the mean of two rounds cancels a cell's place in the order.
  const blocks: number[] = [];
  for (let r = 0; r + 1 < diff.length; r += 2) blocks.push((diff[r]! + diff[r + 1]!) / 2);
  const seqCpu = abbaRatio(ours.seqCpuUs, base.seqCpuUs);
  const rps = abbaRatio(ours.rps, base.rps);
  const cpu = abbaRatio(ours.cpuUs, base.cpuUs);
  const m = (xs: number[]) => Math.round(median(xs));
  const c1 = ours.seqMs.length
    ? `  c=1 ms/request: ours − baseline ${signed(median(blocks))} ms (median over ABBA blocks ${list(blocks, 3)}; rounds ${list(diff, 3)})\n` +
      `  c=1 server CPU µs/request: ours ${m(ours.seqCpuUs)}, baseline ${m(base.seqCpuUs)}, ×${seqCpu.ratio.toFixed(3)} (blocks ${list(seqCpu.blocks, 3)})\n`
    : '';
  console.log(
    `\n${mode}: A/B, ours against the baseline checkout (${BASELINE_CHECKOUT}), same rounds:\n${c1}` +
      `  c=64 req/s: ours ${m(ours.rps)}, baseline ${m(base.rps)}, ×${rps.ratio.toFixed(3)} (blocks ${list(rps.blocks, 3)})\n` +
      `  c=64 server CPU µs/request: ours ${m(ours.cpuUs)}, baseline ${m(base.cpuUs)}, ×${cpu.ratio.toFixed(3)} (blocks ${list(cpu.blocks, 3)})`,
  );
}
