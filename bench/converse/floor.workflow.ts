/** A trivial session-shaped workflow for bench/converse/temporal-floor.bench.ts. */
import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';

export const floorUpdate = defineUpdate<number, [number, boolean]>('floor');

const { touch } = proxyActivities<{ touch(n: number): Promise<number> }>({
  startToCloseTimeout: '10 seconds',
});

export async function floorWorkflow(): Promise<void> {
  setHandler(floorUpdate, async (n, withActivity) => (withActivity ? await touch(n) : n));
  await condition(() => false, '1 hour');
}
