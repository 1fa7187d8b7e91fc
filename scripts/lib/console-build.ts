import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTied } from './children.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CONSOLE = path.join(ROOT, 'console');
const BUILT = path.join(CONSOLE, 'dist', 'index.html');

async function newestMtime(p: string): Promise<number> {
  const s = await stat(p).catch(() => undefined);
  if (!s) return 0;
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs;
  for (const entry of await readdir(p)) newest = Math.max(newest, await newestMtime(path.join(p, entry)));
  return newest;
}

/** True when console/dist is missing or older than any of its sources. */
export async function consoleStale(): Promise<boolean> {
  if (!existsSync(BUILT)) return true;
  const built = (await stat(BUILT)).mtimeMs;
  const sources = await Promise.all(
    ['src', 'index.html', 'vite.config.ts', 'tsconfig.json'].map((p) => newestMtime(path.join(CONSOLE, p))),
  );
  return Math.max(...sources) > built;
}

/** Builds the console with Vite (as `npm run build:console` does) when it is missing or stale. */
export async function ensureConsoleBuilt(onLog: (line: string) => void = () => {}): Promise<boolean> {
  if (!(await consoleStale())) return false;
  if (!existsSync(path.join(ROOT, 'node_modules', 'vite'))) {
    onLog('the console is not built and Vite is not installed (npm install): /console will say so');
    return false;
  }
  onLog('building the web console (console/dist)…');
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const tied = spawnTied(
    process.execPath,
    [vite, 'build', '--config', path.join(CONSOLE, 'vite.config.ts')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  tied.child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  tied.child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const { code, error } = await tied.exited;
  if (error) throw new Error(`building the console failed: ${error.message}`);
  if (code !== 0)
    throw new Error(
      `building the console failed (vite exited ${code}): ${output.trim().split('\n').slice(-5).join(' | ')}`,
    );
  onLog('built the web console');
  return true;
}
