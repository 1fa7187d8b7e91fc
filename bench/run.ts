/** `npm run bench -- <name>`: runs every bench/<name>/*.bench.ts (all folders when no name is given). */
import { readdir } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './lib/scratch.js';

const wanted = process.argv.slice(2);
const all = (await readdir(path.join(ROOT, 'bench'), { withFileTypes: true }))
  .filter((d) => d.isDirectory() && d.name !== 'lib')
  .map((d) => d.name);
let failed = false;
for (const name of wanted.length ? wanted : all) {
  for (const entry of (await readdir(path.join(ROOT, 'bench', name))).filter((f) =>
    f.endsWith('.bench.ts'),
  )) {
    console.log(`\n=== bench/${name}/${entry}`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join('bench', name, entry)], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    failed ||= r.status !== 0;
  }
}
process.exit(failed ? 1 : 0);
