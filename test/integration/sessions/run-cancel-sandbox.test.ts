/**
 * Cancelling a run while its sandbox command runs (the process backend: the
 * daemon runs commands as local processes, no Docker needed): the turn stops
 * while it runs, the command is killed in the sandbox, the call is
 * answered "cancelled", and the next turn goes on in the same session.
 */
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../../helpers/factories.js';
import { useProcessSandboxWorld, type RunData } from './session-harness.js';

describe('cancelling a run while a sandbox command runs', () => {
  const world = useProcessSandboxWorld('run-cancel-sandbox');
  const { dataDir } = world;

  it('interrupt: the turn stops while the command runs, the command is killed and answered "cancelled"', async () => {
    const agent = await world.fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    world.fx.vendor.script({
      reply: {
        tool_calls: [{ name: 'execute_bash_commands', arguments: { code: 'sleep 2; echo late > late.txt' } }],
      },
    });
    const conversationId = uniqueName('conv');
    let started!: (runId: string) => void;
    const commandStarted = new Promise<string>((r) => (started = r));
    let runId = '';
    const stream = world.fx.stream(
      { agent_id: agent.id, message: 'sleep', conversation_id: conversationId },
      (ev) => {
        if (ev.event === 'run.created') runId = ev.data.run_id as string;
        if (ev.event === 'tool_call.started') started(runId);
      },
    );
    await commandStarted;
    // The daemon has the command once the activity announced it; give the request a moment to arrive.
    await new Promise((r) => setTimeout(r, 300));

    const res = await world.fx.api.request<RunData>(
      'POST',
      `/api/agent-server/runs/${runId}/cancel?project_id=${world.fx.projectId}`,
      { action: 'interrupt' },
    );
    expect(res.body.data.status).toBe('cancelled');
    expect(res.body.data.tool_calls).toEqual([
      expect.objectContaining({ name: 'execute_bash_commands', is_error: true }),
    ]);
    expect(String(res.body.data.tool_calls[0]!.output)).toContain('cancelled');
    expect((await stream).at(-1)!.event).toBe('run.cancelled');
    // Killed: it never got to write its file.
    await new Promise((r) => setTimeout(r, 2_500));
    const files = await readdir(dataDir, { recursive: true });
    expect(files.filter((f) => f.endsWith('late.txt'))).toEqual([]);

    world.fx.vendor.script({ reply: { text: 'ok' } });
    const next = await world.fx.converse({
      agent_id: agent.id,
      message: 'again',
      conversation_id: conversationId,
    });
    expect(next.body.data.status).toBe('completed');
    expect(next.body.data.output?.content).toBe('ok');
  });
});
