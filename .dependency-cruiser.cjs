/**
 * Import boundaries (see each top-level folder's README). dependency-cruiser
 * rather than eslint-plugin-import-x: it sees type-only imports as edges
 * (`tsPreCompilationDeps`), so a cycle made only of `import type` is still a
 * cycle, and its rules can allow a folder to import another's types only.
 * Run by `npm run lint`.
 */
const typeOnly = ['type-only'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere, type-only ones included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-no-app',
      severity: 'error',
      comment: 'core/ is shared by the api and the worker: it imports neither, nor workflows or tooling.',
      from: { path: '^core/' },
      to: { path: '^(api|activities|workflows|scripts|bench|test|sandbox-daemon)/' },
    },
    {
      name: 'api-not-activities',
      severity: 'error',
      comment: 'The api reaches the worker through Temporal only.',
      from: { path: '^api/' },
      to: { path: '^activities/' },
    },
    {
      name: 'activities-not-api',
      severity: 'error',
      comment: 'Whatever both need lives in core/.',
      from: { path: '^activities/' },
      to: { path: '^api/' },
    },
    {
      name: 'workflows-import-types-only',
      severity: 'error',
      comment: 'Workflow code runs in a deterministic sandbox: activities, core and api as types only.',
      from: { path: '^workflows/' },
      to: { path: '^(activities|core|api)/', dependencyTypesNot: typeOnly },
    },
    {
      name: 'workflows-npm-workflow-safe',
      severity: 'error',
      comment: 'Of npm packages, workflow code imports only the workflow-safe Temporal ones.',
      from: { path: '^workflows/' },
      to: { dependencyTypes: ['npm'], pathNot: '@temporalio/(workflow|common)/' },
    },
    {
      name: 'api-and-core-not-workflows',
      severity: 'error',
      comment:
        'Only the worker and its activities register or run workflows; the api uses their definitions.',
      from: { path: '^core/' },
      to: { path: '^workflows/' },
    },
    {
      name: 'api-uses-workflow-definitions-only',
      severity: 'error',
      comment: 'The api starts and updates workflows by their definitions, never their code.',
      from: { path: '^api/' },
      to: { path: '^workflows/', pathNot: '\\.definitions\\.ts$' },
    },
    {
      name: 'activities-use-workflow-definitions-only',
      severity: 'error',
      comment:
        'Activities may import the workflows’ definitions (Update/Query names and types), not their code.',
      from: { path: '^activities/', pathNot: '^activities/worker\\.ts$' },
      to: { path: '^workflows/', pathNot: '\\.definitions\\.ts$' },
    },
    {
      name: 'temporal-config-is-pure',
      severity: 'error',
      comment: 'temporal.config.ts is imported by workflow code: constants and pure functions, no imports.',
      from: { path: '^temporal\\.config\\.ts$' },
      to: { dependencyTypesNot: typeOnly },
    },
    {
      name: 'sandbox-daemon-standalone',
      severity: 'error',
      comment: 'The daemon runs inside each sandbox and shares nothing with the platform at run time.',
      from: { path: '^sandbox-daemon/' },
      to: { path: '^(core|api|activities|workflows|scripts|bench|test)/' },
    },
    {
      name: 'daemon-contracts-as-types',
      severity: 'error',
      comment: 'The platform imports the daemon’s wire contracts as types only.',
      from: { path: '^(core|api|activities|workflows)/' },
      to: { path: '^sandbox-daemon/', dependencyTypesNot: typeOnly },
    },
    {
      name: 'console-over-http-only',
      severity: 'error',
      comment: 'The console talks to the API over HTTP, through the client generated from openapi.json.',
      from: { path: '^console/' },
      to: { path: '^(core|api|activities|workflows|sandbox-daemon|scripts|bench|test|migrations)/' },
    },
    {
      name: 'not-to-test-or-tooling',
      severity: 'error',
      comment: 'Product code never imports tests, benchmarks or scripts.',
      from: { path: '^(core|api|activities|workflows|sandbox-daemon|migrations)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.data|sandbox-daemon/dist|console/dist|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
