import type Joi from 'joi';
import type { Middleware } from 'koa';
import type { RequestSchemas } from '../middleware/validate.js';
import type { Permission } from '../../core/auth/roles.js';
import type { ProjectLocator } from './project-of.js';

/**
 * The shape of a route as ApiRouter records it: what the OpenAPI document,
 * the permission checks and the audit trail read. Apart from api-router.ts
 * so that those can read it without importing the router.
 */

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** One documented route: what it validates is what the OpenAPI document shows. */
export interface RouteSpec {
  method: HttpMethod;
  /** Koa path relative to the router's prefix, e.g. `/:id`. */
  path: string;
  summary: string;
  description?: string;
  request?: RequestSchemas;
  /** Schema of the envelope's `data` on success. */
  response?: Joi.Schema;
  /** Non-JSON answers (SSE streams, raw bytes, HTML) are documented by content type. */
  produces?: string;
  /** Request bodies other than JSON (e.g. application/zip). */
  consumes?: string[];
  /** Open without ADMIN_TOKEN (health, the OpenAPI document, the docs page); every other route needs it when set. */
  public?: boolean;
  /**
   * What a user must hold to call it in users mode (core/auth/roles.ts);
   * defaults to the router's `access` (`read` for GET, `write` otherwise).
   * `public` routes need nothing.
   */
  permission?: Permission;
  /**
   * The audit log's name for the route's rows, instead of the one derived from
   * its path (api/http/audit.ts); `false` for a route that records its own events.
   */
  audit?: string | false;
}

/** A router's default permissions, and where the project of its `:id` is found. */
export interface RouterAccess {
  read: Permission;
  write: Permission;
  project?: ProjectLocator;
}

/** How a door other than the configuration API differs: its own credential check and answer shapes. */
export interface DoorOptions {
  /** The guard in front of this router's non-public routes (given ADMIN_TOKEN), instead of the bearer check. */
  guard?: (adminToken: string | undefined) => Middleware | undefined;
  /** Answers in the door's own shapes (`response` is the whole body, errors `{detail}`), not the envelope. */
  raw?: boolean;
  /** The header the door also takes ADMIN_TOKEN in (documented as an API key). */
  apiKeyHeader?: string;
  /**
   * The door's `guard` checks a credential of its own that belongs to no user
   * (SCIM's token): it runs in users mode too, instead of the user check and
   * the route's permission, which such a caller could never hold.
   */
  ownCredential?: boolean;
}

export interface RegisteredRoute extends RouteSpec {
  fullPath: string;
  tag: string;
  /** The permission it needs in users mode (`public` for public routes). */
  permission: Permission;
  /** Where the project of the resource its path names is found. */
  project?: ProjectLocator;
  /** The answer is the door's own shape, not the envelope. */
  raw?: boolean;
  /** The credential the door takes, when not ADMIN_TOKEN as a bearer token. */
  apiKeyHeader?: string;
  /** Its door's own credential, not a user's, guards it in every mode (DoorOptions.ownCredential). */
  ownCredential?: boolean;
}
