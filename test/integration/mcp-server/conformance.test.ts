/**
 * The MCP conformance suite's server scenarios that apply to a tools-only
 * server, run against the MCP door of a real stack (the API in this process,
 * a worker, PostgreSQL, Temporal, the scripted vendor), one at a time, for
 * each revision the door speaks. The scenarios call tools by fixed names
 * (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`):
 * the project has agents of those names, exposed over MCP.
 *
 * The suite's tool calls carry no arguments. `test_simple_text` and
 * `test_tool_with_progress` are agents with `expose.mcp_message`, so their
 * call runs a real turn (the scripted model answers; progress comes from the
 * turn's steps); `test_error_handling` has none, so its call is answered as
 * MCP says input errors are, a tool result with `isError` naming `message`.
 * What needs the suite's diagnostic tools is NOT_APPLICABLE below and is
 * covered with the official clients (door.test.ts). The table goes to
 * test-results/mcp-conformance-server.md; `MCP_CONFORMANCE_VERBOSE=1` prints
 * every check.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noTemporal } from '../../helpers/services.js';
import { runServerScenario, type ServerScenarioResult } from '../../conformance/server-scenario.js';
import { useSessionWorld } from '../sessions/session-harness.js';

/** Per revision: the scenarios of a tools-only server (the handshake of its era, tools, DNS rebinding). */
const SCENARIOS: Record<string, string[]> = {
  '2025-11-25': [
    'server-initialize',
    'tools-list',
    'tools-call-simple-text',
    'tools-call-error',
    'tools-call-with-progress',
    'dns-rebinding-protection',
  ],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'tools-call-simple-text',
    'tools-call-error',
    'tools-call-with-progress',
    'dns-rebinding-protection',
  ],
};

/**
 * Checks that cannot pass against a server whose tools are agents, by check
 * id, each with why. They need the suite's own diagnostic tools (which
 * behave in ways no agent does).
 * What they stand for is covered by door.test.ts with the official clients.
 */
const NOT_APPLICABLE: Record<string, string> = {
  'sep-2575-server-rejects-undeclared-capability':
    'needs the diagnostic tool test_missing_capability (one that requires sampling); an agent needs no client capability',
  'sep-2575-missing-capability-http-400': 'the same diagnostic tool (test_missing_capability)',
  'sep-2575-http-server-no-independent-requests-on-stream':
    'needs the diagnostic tool test_streaming_elicitation; an approval question is an input_required result',
  'sep-2575-server-no-log-without-loglevel':
    'needs the diagnostic tool test_logging_tool; the door sends no log messages at all',
};

const results: ServerScenarioResult[] = [];

describe.skipIf(noTemporal())('MCP conformance: the door as an MCP server', () => {
  const world = useSessionWorld();
  let url: string;

  beforeAll(async () => {
    url = `${world.fx.api.url}/api/mcp/${world.fx.projectId}`;
    world.fx.vendor.respond = () => ({ reply: { text: 'done' } });
    for (const name of ['test_simple_text', 'test_error_handling', 'test_tool_with_progress'])
      await world.fx.agent({
        name,
        description: `The conformance suite's ${name}`,
        expose: {
          mcp: true,
          a2a: false,
          ...(name === 'test_error_handling' ? {} : { mcp_message: `Run ${name}.` }),
        },
      });
  });

  afterAll(async () => {
    const rows = results.map((r) => {
      const passed = r.checks.filter((c) => c.status === 'SUCCESS').length;
      const real = r.failures.filter((c) => !(c.id in NOT_APPLICABLE));
      const notes = [
        ...real.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`),
        ...r.failures.filter((c) => c.id in NOT_APPLICABLE).map((c) => `${c.id} (not applicable)`),
      ].join('; ');
      const verdict = real.length ? 'FAIL' : 'pass';
      return `| ${r.revision} | \`${r.scenario}\` | ${verdict} | ${passed}/${r.checks.length} | ${notes.replace(/\|/g, '\\|')} |`;
    });
    const file = path.resolve(import.meta.dirname, '../../../test-results/mcp-conformance-server.md');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      [
        '| revision | scenario | result | checks passed | failing checks |',
        '| --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n') + '\n',
    );
  });

  for (const [revision, scenarios] of Object.entries(SCENARIOS))
    describe(revision, () => {
      it.each(scenarios)('%s', async (scenario) => {
        const r = await runServerScenario(url, scenario, revision);
        results.push(r);
        if (process.env.MCP_CONFORMANCE_VERBOSE)
          console.log(
            JSON.stringify(
              r.checks.map((c) => [c.id, c.status, c.errorMessage]),
              null,
              1,
            ),
            r.output,
          );
        expect(r.checks.length, r.output).toBeGreaterThan(0);
        const failed = r.failures.filter((c) => !(c.id in NOT_APPLICABLE));
        expect(failed.map((c) => `${c.id}: ${c.errorMessage ?? ''}`)).toEqual([]);
      });
    });
});
