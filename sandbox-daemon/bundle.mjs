// Bundles the daemon into one dependency-free file, dist/daemon.mjs, that runs
// on Node >= 18 (Debian bookworm's nodejs in the sandbox image).
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = path.join(here, 'dist', 'daemon.mjs');

await build({
  entryPoints: [path.join(here, 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node18',
  minify: false,
  legalComments: 'none',
  logLevel: 'warning',
});
console.log(outfile);
