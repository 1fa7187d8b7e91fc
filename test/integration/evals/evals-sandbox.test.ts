/**
 * Sandbox commands in an eval (the process backend: commands run as local
 * processes, so a command's side effect shows in a file the test reads): the
 * recorded command is answered from the recording without running; a
 * diverged one stops the replay, or runs in the scratch conversation's own
 * sandbox with `execute_diverged_tools`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { noTemporal } from '../../helpers/services.js';
import { useProcessSandboxWorld } from '../sessions/session-harness.js';
import { record, resultsOf, startEval, untilEnded } from './eval-harness.js';

describe.skipIf(noTemporal())('evals with sandbox commands', () => {
  const world = useProcessSandboxWorld('evals-sandbox');
  const { dataDir } = world;

  it('a recorded command is not run again; a diverged one stops the case unless execute_diverged_tools runs it', async () => {
    const { fx } = world;
    const marker = path.join(dataDir, `marker-${randomUUID()}`);
    const command = (word: string) => ({
      tool_calls: [{ name: 'execute_bash_commands', arguments: { code: `echo ${word} >> ${marker}` } }],
    });
    const lines = async () => (await readFile(marker, 'utf8')).trim().split('\n');
    const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const conversation = `conv-${randomUUID()}`;
    fx.vendor.script({ reply: command('recorded') }, { reply: { text: 'done' } });
    await record(fx, agent.id, conversation, ['write it']);
    expect(await lines()).toEqual(['recorded']);

    fx.vendor.script(
      { reply: command('recorded') },
      { reply: { text: 'done' } },
      { reply: command('other') },
    );
    const replay = await untilEnded(
      fx,
      (
        await startEval(fx, {
          agent_id: agent.id,
          conversation_ids: [conversation],
          variants: [{ name: 'same' }, { name: 'other' }],
          concurrency: 1,
        })
      ).id,
    );
    expect(replay.status).toBe('completed');
    expect((await resultsOf(fx, replay.id)).map((r) => [r.variant, r.status])).toEqual([
      ['same', 'completed'],
      ['other', 'diverged'],
    ]);
    // Neither the recorded command nor the diverged one ran.
    expect(await lines()).toEqual(['recorded']);

    fx.vendor.script({ reply: command('other') }, { reply: { text: 'done' } });
    const executed = await untilEnded(
      fx,
      (
        await startEval(fx, {
          agent_id: agent.id,
          conversation_ids: [conversation],
          variants: [{ name: 'other' }],
          execute_diverged_tools: true,
        })
      ).id,
    );
    const [row] = await resultsOf(fx, executed.id);
    expect(row).toMatchObject({ status: 'completed', output: 'done', exact_match: true });
    expect(await lines()).toEqual(['recorded', 'other']);
  });
});
