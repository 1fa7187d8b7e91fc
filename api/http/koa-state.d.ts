import type { Logger } from '../../core/logger.js';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    /** Set by validate(): params, query and body after joi conversion. */
    input?: unknown;
    error?: unknown;
  }
}
