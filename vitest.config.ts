import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Our machines have 2 cores; suites share one Postgres server and one Temporal dev server.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        // Unit, integration and end-to-end tests, against the real services the global setup starts.
        extends: true,
        test: {
          name: 'server',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The console's components in jsdom, the API answered by a fake fetch: no services, so
        // running only these does not start the global setup's Postgres and Temporal.
        extends: true,
        plugins: [react()],
        test: {
          name: 'console',
          include: ['console/test/**/*.test.tsx'],
          environment: 'jsdom',
          setupFiles: ['console/test/setup.ts'],
          // A form rendered in jsdom takes seconds on a loaded 2-core machine; vitest's 5 s default flakes there.
          testTimeout: 20_000,
        },
      },
    ],
  },
});
