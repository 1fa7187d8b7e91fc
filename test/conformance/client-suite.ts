/**
 * The official MCP conformance suite's client scenarios of one protocol
 * revision, with our platform as the client: the suite starts each scenario's
 * MCP server (and authorization server) and spawns test/conformance/adapter.ts,
 * which drives the platform through its REST API only; the suite then judges
 * what reached its servers. The real API, a real worker on Temporal and
 * PostgreSQL; the model is the scripted OpenAI-format vendor, calling every
 * tool it is offered (test/conformance/scripted-model.ts).
 * docs/mcp-conformance.md says how to run it and what it found.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrompt } from '../helpers/factories/content.js';
import { noTemporal } from '../helpers/services.js';
import {
  sessionEnv,
  spawnWorker,
  startFixture,
  type Fixture,
} from '../integration/sessions/session-harness.js';
import { callEveryOfferedTool } from './scripted-model.js';
import { clientRequirements, describeResult, runScenario, type ScenarioResult } from './run-scenario.js';
import { writeReport } from './report.js';

/** Our public origin, as behind a TLS proxy: the Client ID Metadata Document's URL must be https. */
const PUBLIC_URL = 'https://agent-server.test';
/** How long the suite lets the adapter run one scenario (a passing one takes 2–4 s). */
const ADAPTER_TIMEOUT_MS = 20_000;
const reportFor = (revision: string) =>
  path.resolve(import.meta.dirname, `../../test-results/mcp-conformance-client-${revision}.md`);

/** MCP_CONFORMANCE_VERBOSE=1 prints every check and the adapter's output. */
const VERBOSE = process.env.MCP_CONFORMANCE_VERBOSE === '1';

/** Runs every client scenario `REVISION` requires (each must pass) and those it does not score (reported). */
export async function clientConformanceSuite(REVISION: string): Promise<void> {
  const requirements = await clientRequirements(REVISION);

  describe.skipIf(noTemporal())(`MCP conformance: client scenarios required by ${REVISION}`, () => {
    let fx: Fixture;
    let worker: ChildProcess;
    const required: ScenarioResult[] = [];
    const unscored: ScenarioResult[] = [];
    let adapterEnv: Record<string, string>;

    beforeAll(async () => {
      const env = sessionEnv({
        PUBLIC_URL,
        // The scenarios' servers listen on localhost; the scripted vendor on 127.0.0.1.
        EGRESS_ALLOW: 'localhost,127.0.0.1,[::1]',
        MCP_LIST_TIMEOUT_MS: '5000',
      });
      // The worker as its own process (`npm run worker`'s command), configured by its
      // environment as in a deployment: authorization URLs it makes mid-turn name PUBLIC_URL.
      [fx, { child: worker }] = await Promise.all([startFixture(env), spawnWorker(env)]);
      fx.vendor.respond = callEveryOfferedTool;
      const prompt = await createPrompt(fx.api, fx.projectId, {
        template: 'You are a client of MCP servers.',
      });
      adapterEnv = {
        AGENT_SERVER_URL: fx.api.url,
        PUBLIC_URL,
        CONFORMANCE_PROJECT_ID: fx.projectId,
        CONFORMANCE_MODEL_ID: fx.modelId,
        CONFORMANCE_PROMPT_ID: prompt.id,
        // The adapter gives up (saying where the run stood) before the suite kills it.
        CONFORMANCE_TURN_TIMEOUT_MS: String(ADAPTER_TIMEOUT_MS - 4_000),
        CONFORMANCE_REQUEST_TIMEOUT_MS: String(ADAPTER_TIMEOUT_MS - 4_000),
      };
    });

    afterAll(async () => {
      if (worker && worker.exitCode === null && worker.signalCode === null) {
        const exited = once(worker, 'exit');
        worker.kill('SIGTERM');
        await exited;
      }
      await fx?.close();
    });

    afterAll(async () => {
      await writeReport(reportFor(REVISION), [
        [`Required by ${REVISION}`, required],
        ['Run, not scored (extensions, later additions)', unscored],
      ]);
    });

    const run = (scenario: string) =>
      runScenario(scenario, { specVersion: REVISION, timeoutMs: ADAPTER_TIMEOUT_MS, env: adapterEnv });

    for (const scenario of requirements.scored) {
      it(scenario, { timeout: ADAPTER_TIMEOUT_MS + 15_000 }, async () => {
        const result = await run(scenario);
        required.push(result);
        console.log(describeResult(result, VERBOSE));
        expect(result.passed, describeResult(result)).toBe(true);
      });
    }

    it(
      `runs the scenarios ${REVISION} does not score, and reports them without failing`,
      { timeout: requirements.notScored.length * (ADAPTER_TIMEOUT_MS + 5_000) },
      async () => {
        for (const scenario of requirements.notScored) {
          const result = await run(scenario);
          unscored.push(result);
          console.log(`(not scored) ${describeResult(result, VERBOSE)}`);
        }
        expect(unscored).toHaveLength(requirements.notScored.length);
      },
    );
  });
}
