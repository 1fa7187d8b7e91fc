import { describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor } from '../sessions/session-harness.js';

/** OTEL_RECORD_CONTENT=true is the server-wide switch: content is recorded whatever the project says. */
describe.skipIf(noTemporal())('OTEL_RECORD_CONTENT=true', () => {
  const world = useSessionWorld({ OTEL_RECORD_CONTENT: 'true' });

  it("records a turn's prompt and completion in a project whose record_content is off", async () => {
    const project = await world.fx.api.request<{ record_content: boolean }>(
      'GET',
      `/api/agent-server/projects/${world.fx.projectId}`,
    );
    expect(project.body.data.record_content).toBe(false);
    const agent = await world.fx.agent({}, 'Be brief.');
    world.fx.vendor.script({ reply: { text: 'recorded-1234' } });
    const turn = (await world.fx.converse({ agent_id: agent.id, message: 'say recorded' })).body.data;
    expect(turn.status).toBe('completed');
    const model = await waitFor<{ attributes: Record<string, unknown> }>(
      async () => {
        await currentTelemetry()?.flush();
        return world.fx.api.server.deps
          .db('spans')
          .where({ trace_id: turn.trace_id!, name: 'chat gpt-test' })
          .first('attributes');
      },
      20_000,
      'the model span',
    );
    expect(model.attributes).toMatchObject({ 'agent_server.content.recorded': true });
    expect(String(model.attributes['gen_ai.input.messages'])).toContain('say recorded');
    expect(String(model.attributes['gen_ai.output.messages'])).toContain('recorded-1234');
  });
});
