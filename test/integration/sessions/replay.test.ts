/**
 * Upgrade safety: a session workflow history recorded by the code before
 * agent tools (commit 334d731: a turn whose model asked for a tool, answered
 * by one `runToolCalls` activity, then a plain turn) replays without a
 * determinism error on today's workflow code (`patched('agent-tools')`).
 * The fixture was recorded with that commit's test harness against a real
 * Temporal dev server (test/fixtures/histories/README.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const fixture = path.resolve(import.meta.dirname, '../../fixtures/histories/session-before-agent-tools.bin');

describe('session workflow: replaying histories from before agent tools', () => {
  it('replays a turn with a tool call and a later turn without a determinism error', async () => {
    const history = temporal.api.history.v1.History.decode(readFileSync(fixture));
    const types = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    // The fixture is what it claims: the old per-step tool activity is in it.
    expect(types).toContain('runToolCalls');
    expect(types.filter((t) => t === 'callModel').length).toBeGreaterThanOrEqual(3);
    await expect(
      Worker.runReplayHistory(
        { workflowsPath: require.resolve('../../../workflows/index.ts') },
        history,
        'session-before-agent-tools',
      ),
    ).resolves.toBeUndefined();
  }, 60_000);
});
