import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when the module at `metaUrl` is the process's entry point (works under node, tsx and vitest). */
export function isMain(metaUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  const self = fileURLToPath(metaUrl);
  const resolved = path.resolve(entry);
  return resolved === self || resolved === self.replace(/\.ts$/, '') || `${resolved}.ts` === self;
}
