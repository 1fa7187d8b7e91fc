/**
 * LOG_FORMAT: readable lines (pino-pretty) on a terminal, JSON lines when the
 * output is not a terminal, either one forced by LOG_FORMAT. The terminal is a
 * real pseudo-terminal from util-linux's `script`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const HAVE_SCRIPT = existsSync('/usr/bin/script');

async function logLine(format: string | undefined, terminal: boolean): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  delete env.LOG_FORMAT;
  if (format) env.LOG_FORMAT = format;
  const node = [process.execPath, '--import', 'tsx', 'test/fixtures/log-line.ts'];
  const { stdout } = terminal
    ? await run('script', ['-qec', node.join(' '), '/dev/null'], { cwd: ROOT, env })
    : await run(node[0]!, node.slice(1), { cwd: ROOT, env });
  // Without colours (ESC [ … m), so that the text can be matched.
  return stdout
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
    .replace(/\r/g, '')
    .trim();
}

function isJsonLine(text: string): boolean {
  try {
    return (JSON.parse(text) as { msg?: string }).msg === 'hello from the logger';
  } catch {
    return false;
  }
}

describe('LOG_FORMAT', () => {
  it('writes JSON lines when the output is not a terminal, readable ones when forced', async () => {
    const [byDefault, json, pretty] = await Promise.all([
      logLine(undefined, false),
      logLine('json', false),
      logLine('pretty', false),
    ]);
    expect(isJsonLine(byDefault)).toBe(true);
    expect(isJsonLine(json)).toBe(true);
    expect(isJsonLine(pretty)).toBe(false);
    expect(pretty).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello from the logger\n\s+port: 6060$/);
  });

  it.skipIf(!HAVE_SCRIPT)('writes readable lines on a terminal, JSON lines when forced', async () => {
    const [byDefault, json] = await Promise.all([logLine(undefined, true), logLine('json', true)]);
    expect(byDefault).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello from the logger\n\s+port: 6060$/);
    expect(isJsonLine(json)).toBe(true);
  });
});
