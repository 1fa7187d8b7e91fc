/**
 * `npm run console:client`: regenerates the console's typed API client
 * (console/src/api/schema.d.ts) from the API's own OpenAPI document, so the
 * console cannot drift from the API (test/unit/console-client.test.ts fails
 * when the checked-in file is stale).
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { consoleClientSource } from './lib/console-client.js';

const target = fileURLToPath(new URL('../console/src/api/schema.d.ts', import.meta.url));
await writeFile(target, await consoleClientSource());
process.stdout.write(`wrote ${target}\n`);
