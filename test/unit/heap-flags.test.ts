import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const scripts = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

const heapFlags = (command: string) => command.match(/--max-(old|semi)-space-size=\d+/g) ?? [];

describe('heap caps', () => {
  // Without a cap V8 sizes the heap from the machine's memory (4 GiB on 24 GiB) and lets it
  // grow far past the live data; `npm start` serves the same API and must be capped the same.
  it('npm start runs with the same heap flags as npm run api', () => {
    expect(heapFlags(scripts.api!)).toEqual(['--max-old-space-size=1024', '--max-semi-space-size=64']);
    expect(heapFlags(scripts.start!)).toEqual(heapFlags(scripts.api!));
  });
});
