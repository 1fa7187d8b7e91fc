import { describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld } from '../sessions/session-harness.js';

interface Row {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  attributes: Record<string, unknown>;
}

/** API and worker in one process (as under `npm start`), each under its own service name. */
describe.skipIf(noTemporal())('one converse request is one trace', () => {
  const world = useSessionWorld();

  async function spansOf(traceId: string, until: (spans: Row[]) => boolean): Promise<Row[]> {
    let spans: Row[] = [];
    for (let i = 0; i < 60; i++) {
      await currentTelemetry()?.flush();
      spans = await world.fx.api.server.deps
        .db('spans')
        .where({ trace_id: traceId })
        .orderBy('start_time')
        .select<Row[]>('*');
      if (until(spans)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return spans;
  }

  it('links the HTTP span, the Update, the turn activities and the model call, for a later turn of a running session too', async () => {
    const agent = await world.fx.agent({}, 'Be brief.');
    world.fx.vendor.script(
      { reply: { text: 'one', usage: { input: 7, output: 1 } } },
      { reply: { text: 'two', usage: { input: 9, output: 1 } } },
    );
    const first = await world.fx.converse({ agent_id: agent.id, message: 'a' });
    const second = await world.fx.converse({
      agent_id: agent.id,
      conversation_id: first.body.data.conversation_id,
      message: 'b',
    });
    for (const run of [first.body.data, second.body.data]) {
      const traceId = run.trace_id!;
      const spans = await spansOf(
        traceId,
        (s) =>
          s.some((x) => x.name === 'chat gpt-test') &&
          s.some((x) => x.name === 'RunActivity:callModel') &&
          // Workflow spans arrive when their workflow task completes.
          s.some((x) => x.name === 'StartActivity:callModel') &&
          s.some((x) => x.name === 'HandleUpdate:converse'),
      );
      const names = spans.map((s) => s.name).join(', ');
      const byId = new Map(spans.map((s) => [s.span_id, s]));
      const ancestors = (s: Row): string[] => {
        const out: string[] = [];
        for (
          let p = s.parent_span_id ? byId.get(s.parent_span_id) : undefined;
          p;
          p = p.parent_span_id ? byId.get(p.parent_span_id) : undefined
        )
          out.push(p.name);
        return out;
      };
      const http = spans.find((s) => s.kind === 'SERVER' && s.name === 'POST /api/agent-server/converse');
      expect(http, names).toBeDefined();
      expect(http!.service_name).toBe('agent-server-api');
      const activity = spans.find((s) => s.name === 'RunActivity:callModel');
      expect(activity, names).toBeDefined();
      expect(activity!.service_name).toBe('agent-server-worker');
      expect(ancestors(activity!)).toContain(http!.name);
      const model = spans.find((s) => s.name === 'chat gpt-test');
      expect(model, names).toBeDefined();
      expect(model!.kind).toBe('CLIENT');
      expect(model!.attributes).toMatchObject({
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': run === first.body.data ? 7 : 9,
        'gen_ai.usage.output_tokens': 1,
        'gen_ai.agent.id': agent.id,
        'gen_ai.conversation.id': run.conversation_id,
        'agent_server.project.id': world.fx.projectId,
      });
      expect(ancestors(model!)).toEqual(expect.arrayContaining(['RunActivity:callModel', http!.name]));
      // Prompt and completion text are not recorded unless OTEL_RECORD_CONTENT=true.
      expect(model!.attributes['gen_ai.input.messages']).toBeUndefined();
    }
  });
});
