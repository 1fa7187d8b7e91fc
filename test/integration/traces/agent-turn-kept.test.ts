import { describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld } from '../sessions/session-harness.js';

/** Agent turns are always stored: the converse request, its workflow and its activities, in API and worker. */
describe.skipIf(noTemporal())('OTEL_TRACES_SAMPLER_ARG=0: agent turns are stored all the same', () => {
  const world = useSessionWorld({
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  });

  async function names(traceId: string, until: (names: string[]) => boolean): Promise<string[]> {
    let found: string[] = [];
    for (let i = 0; i < 60; i++) {
      await currentTelemetry()?.flush();
      found = await world.fx.api.server.deps.db('spans').where({ trace_id: traceId }).pluck('name');
      if (until(found)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return found;
  }

  it('stores every span of a converse turn, and nothing of an ordinary request', async () => {
    const agent = await world.fx.agent({}, 'Be brief.');
    world.fx.vendor.script({ reply: { text: 'kept', usage: { input: 3, output: 1 } } });
    const turn = await world.fx.converse({ agent_id: agent.id, message: 'hello' });
    expect(turn.status).toBe(200);
    const stored = await names(
      turn.body.data.trace_id!,
      (n) =>
        n.includes('chat gpt-test') &&
        n.includes('StartActivity:callModel') &&
        n.includes('HandleUpdate:converse'),
    );
    for (const name of [
      'POST /api/agent-server/converse',
      'UpdateWithStartWorkflow:converse',
      'HandleUpdate:converse',
      'StartActivity:callModel',
      'RunActivity:callModel',
      'chat gpt-test',
    ])
      expect(stored, name).toContain(name);

    const ordinary = await world.fx.api.request('GET', `/api/agent-server/agents/${agent.id}`);
    expect(ordinary.status).toBe(200);
    await currentTelemetry()!.flush();
    const none = await world.fx.api.server.deps
      .db('spans')
      .where({ trace_id: ordinary.headers.get('x-trace-id')! })
      .pluck('name');
    expect(none).toEqual([]);
  });
});
