import type { Logger } from '../../core/logger.js';
import type { BodyReader } from './body-reader.js';
import type { Principal } from '../../core/auth/principal.js';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    /** Set by requestBodies(): the process's reader of request bodies (api/http/body-reader.ts). */
    bodies?: BodyReader;
    /** Set by validate(): params, query and body after joi conversion. */
    input?: unknown;
    error?: unknown;
    /** Set by the route's guard: who is calling and what they may do (api/http/authenticate.ts). */
    principal?: Principal;
  }
  interface Request {
    /** The parsed JSON body, once a route has read it (readJsonBody); undefined before. */
    body?: unknown;
  }
}
