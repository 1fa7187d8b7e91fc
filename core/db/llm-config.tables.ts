/**
 * The providers, virtual keys, grants and models tables under the path their
 * older importers use (api/gateway/, core/llm/, activities/session/
 * metered-call.ts); the definitions are in tables/.
 */
export * from './tables/providers.js';
export * from './tables/virtual-keys.js';
export * from './tables/virtual-key-grants.js';
export * from './tables/models.js';
