import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../../scripts/lib/console-build.js';

const DIST = path.resolve(import.meta.dirname, '../../../console/dist');
const LIMIT_GZIP_BYTES = 300 * 1024;

describe("the console's first page", () => {
  // What a browser must fetch before the first page renders: the entry script and every
  // chunk index.html preloads with it (route chunks load later, on navigation).
  it('ships at most 300 KB of gzipped JavaScript; the rest is split by route', async () => {
    await ensureConsoleBuilt();
    const html = await readFile(path.join(DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let total = 0;
    for (const s of scripts) total += gzipSync(await readFile(path.join(DIST, s))).length;
    console.info(`console first page: ${scripts.length} script(s), ${(total / 1024).toFixed(1)} KB gzip`);
    expect(total).toBeLessThanOrEqual(LIMIT_GZIP_BYTES);
  }, 120_000);
});
