/**
 * Runs the MCP conformance suite's client scenarios one at a time, with our
 * adapter as the client, and reads back what the suite judged.
 *
 * One scenario per runner invocation, on purpose: `conformance client
 * --requirements <rev>` starts every scenario of the set at once
 * (`Promise.all`), two dozen adapters and platform turns together, more than
 * a 2-core machine runs within the scenarios' timeouts. `--spec-version` with
 * `--force` gives each scenario the wire and membership `--requirements`
 * would; a scenario passes as `--requirements` scores it: no check FAILURE.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SUITE_DIR = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance');
const SUITE_CLI = path.join(SUITE_DIR, 'dist/index.js');
export const ADAPTER = path.join(ROOT, 'test/conformance/adapter.ts');

export interface Check {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: unknown;
}

export interface ScenarioResult {
  scenario: string;
  /**
   * No check FAILURE (how `--requirements` scores a scenario), and the adapter
   * finished its part: exit 0 unless the scenario expects the client to give
   * up, no timeout. Without the second half a scenario whose servers saw the
   * right requests would pass while the turn never reached the tool.
   */
  passed: boolean;
  /** The suite's own verdict on the checks alone (no FAILURE). */
  checksPassed: boolean;
  /** The adapter exited non-zero where the scenario does not allow it (the runner's "CLIENT EXITED WITH ERROR"). */
  adapterFailed: boolean;
  checks: Check[];
  failures: Check[];
  warnings: Check[];
  /** The adapter's exit code as the runner saw it (null when the runner did not say: 0). */
  adapterExitCode: number;
  adapterTimedOut: boolean;
  /** The adapter's own stdout and stderr, and the runner's output. */
  adapterOutput: string;
  runnerOutput: string;
  durationMs: number;
}

/** The client scenarios a spec revision requires, and those it runs without scoring (extensions, later additions). */
export async function clientRequirements(
  revision: string,
): Promise<{ scored: string[]; notScored: string[] }> {
  const text = await readFile(path.join(SUITE_DIR, 'requirements', `${revision}.yaml`), 'utf8');
  const doc = loadYaml(text) as {
    client: string[];
    not_scored?: Array<{ scenario: string; leg: string }>;
  };
  const notScored = (doc.not_scored ?? []).filter((e) => e.leg === 'client').map((e) => e.scenario);
  return { scored: doc.client, notScored };
}

async function findFile(dir: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile() && entry.name === name) return path.join(entry.parentPath, entry.name);
  return undefined;
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SUITE_CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/**
 * Runs `scenario` at `specVersion` with the adapter as the client (`env`
 * reaches the adapter through the runner), waiting at most `timeoutMs` for it.
 */
export async function runScenario(
  scenario: string,
  options: { specVersion: string; timeoutMs: number; env: Record<string, string> },
): Promise<ScenarioResult> {
  const outputDir = await mkdtemp(path.join(os.tmpdir(), 'mcp-conformance-'));
  const started = Date.now();
  try {
    // The runner splits --command on spaces: node's path and the adapter's must have none.
    const command = `${process.execPath} --import tsx ${ADAPTER}`;
    const { output } = await runCli(
      [
        'client',
        '--scenario',
        scenario,
        '--spec-version',
        options.specVersion,
        '--force',
        '--timeout',
        String(options.timeoutMs),
        '--output-dir',
        outputDir,
        '--command',
        command,
      ],
      options.env,
    );
    const checksFile = await findFile(outputDir, 'checks.json');
    if (!checksFile) throw new Error(`the conformance runner wrote no checks for ${scenario}:\n${output}`);
    const resultDir = path.dirname(checksFile);
    const checks = JSON.parse(await readFile(checksFile, 'utf8')) as Check[];
    const read = (f: string) => readFile(path.join(resultDir, f), 'utf8').catch(() => '');
    const failures = checks.filter((c) => c.status === 'FAILURE');
    const adapterFailed = output.includes('CLIENT EXITED WITH ERROR');
    const adapterTimedOut = output.includes('CLIENT TIMED OUT') || /Client timed out after/.test(output);
    return {
      scenario,
      passed: failures.length === 0 && !adapterFailed && !adapterTimedOut,
      checksPassed: failures.length === 0,
      adapterFailed,
      checks,
      failures,
      warnings: checks.filter((c) => c.status === 'WARNING'),
      adapterExitCode: Number(/Client exited with code (-?\d+)/.exec(output)?.[1] ?? 0),
      adapterTimedOut,
      adapterOutput: `${await read('stdout.txt')}${await read('stderr.txt')}`,
      runnerOutput: output,
      durationMs: Date.now() - started,
    };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

/**
 * A result in a few lines: the failing checks' messages, warnings, and the
 * adapter's complaint; `verbose` adds every check and the adapter's output.
 */
export function describeResult(r: ScenarioResult, verbose = false): string {
  const lines = [
    `${r.passed ? 'PASS' : 'FAIL'} ${r.scenario} (${r.checks.length} checks, ${r.durationMs} ms)`,
  ];
  for (const c of r.failures) lines.push(`  FAILURE ${c.id}: ${c.errorMessage ?? c.description}`);
  for (const c of r.warnings) lines.push(`  WARNING ${c.id}: ${c.errorMessage ?? c.description}`);
  if (r.adapterTimedOut) lines.push('  the adapter timed out');
  if (r.adapterExitCode !== 0) {
    const allowed = r.adapterFailed ? '' : ' (the scenario allows it)';
    const complaint = r.adapterOutput
      .split('\n')
      .filter((l) => l.startsWith('[adapter]'))
      .slice(-3);
    lines.push(`  adapter exited ${r.adapterExitCode}${allowed}: ${complaint.join(' | ')}`);
  }
  if (verbose) {
    for (const c of r.checks) {
      const details =
        c.status === 'FAILURE' || c.status === 'WARNING' ? ` ${JSON.stringify(c.details ?? {})}` : '';
      lines.push(`  ${c.status} ${c.id}: ${c.errorMessage ?? c.description}${details}`);
    }
    lines.push(r.adapterOutput.trimEnd());
  }
  return lines.join('\n');
}
