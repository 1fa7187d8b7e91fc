import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { consoleClientSource } from '../../scripts/lib/console-client.js';

describe("the console's typed API client", () => {
  // The console cannot drift from the API: its client is generated from the routes' own schemas.
  it('is what npm run console:client generates from the current OpenAPI document', async () => {
    const checkedIn = await readFile(new URL('../../console/src/api/schema.d.ts', import.meta.url), 'utf8');
    expect(
      checkedIn === (await consoleClientSource()),
      'console/src/api/schema.d.ts is stale: run npm run console:client',
    ).toBe(true);
  }, 30_000);
});
