import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ScenarioResult } from './run-scenario.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** What failed in a scenario, in one table cell: its failing checks' messages, else its warnings, else the adapter's complaint. */
function why(r: ScenarioResult): string {
  const checks = r.failures.length > 0 ? r.failures : r.warnings;
  const parts = checks.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`);
  if (r.adapterExitCode !== 0) {
    const complaint = r.adapterOutput
      .split('\n')
      .filter((l) => l.startsWith('[adapter]'))
      .at(-1);
    const allowed = r.adapterFailed ? '' : ' (allowed by the scenario)';
    parts.push(`adapter exited ${r.adapterExitCode}${allowed}${complaint ? `: ${complaint}` : ''}`);
  }
  if (r.adapterTimedOut) parts.push('adapter timed out');
  return cell(parts.join('; ').slice(0, 600));
}

/** The results as the table of docs/mcp-conformance.md. */
export function markdownTable(results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const counts = `${r.checks.filter((c) => c.status === 'SUCCESS').length}/${r.checks.length}`;
    const verdict = r.passed
      ? r.warnings.length > 0
        ? 'pass (warnings)'
        : 'pass'
      : r.checksPassed
        ? 'FAIL (adapter)'
        : 'FAIL';
    return `| \`${r.scenario}\` | ${verdict} | ${counts} | ${why(r)} |`;
  });
  return [
    '| scenario | result | checks passed | failing checks / notes |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** Writes a report of `sections` (title → results) to `file`, for docs/mcp-conformance.md. */
export async function writeReport(file: string, sections: Array<[string, ScenarioResult[]]>): Promise<void> {
  const body = sections
    .filter(([, results]) => results.length > 0)
    .map(([title, results]) => `## ${title}\n\n${markdownTable(results)}\n`)
    .join('\n');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `# MCP conformance, client scenarios (${new Date().toISOString()})\n\n${body}`);
}
