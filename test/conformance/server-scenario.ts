/**
 * Runs one of the MCP conformance suite's server scenarios against a URL and
 * reads back its checks: `conformance server --url … --scenario …
 * --spec-version <rev> --force`, one scenario per invocation (the same
 * reasoning as run-scenario.ts: the machine runs one at a time well).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Check } from './run-scenario.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SUITE_CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export interface ServerScenarioResult {
  scenario: string;
  revision: string;
  checks: Check[];
  failures: Check[];
  output: string;
  durationMs: number;
}

async function checksFile(dir: string): Promise<string | undefined> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile() && entry.name === 'checks.json') return path.join(entry.parentPath, entry.name);
  return undefined;
}

export async function runServerScenario(
  url: string,
  scenario: string,
  revision: string,
  timeoutMs = 30_000,
): Promise<ServerScenarioResult> {
  const out = await mkdtemp(path.join(os.tmpdir(), 'mcp-server-conformance-'));
  const started = performance.now();
  try {
    const args = [
      SUITE_CLI,
      'server',
      '--url',
      url,
      '--scenario',
      scenario,
      '--spec-version',
      revision,
      '--force',
      '--timeout',
      String(timeoutMs),
      '--output-dir',
      out,
    ];
    const output = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.stderr.on('data', (c: Buffer) => (text += c.toString()));
      child.on('close', () => resolve(text));
    });
    const file = await checksFile(out);
    const checks = file ? (JSON.parse(await readFile(file, 'utf8')) as Check[]) : [];
    return {
      scenario,
      revision,
      checks,
      failures: checks.filter((c) => c.status === 'FAILURE'),
      output,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
