import type { Knex } from 'knex';

/**
 * What the table modules share. Their rows are type aliases, not interfaces,
 * so a row also passes where a `Record<string, unknown>` is expected.
 *
 * A jsonb (or json) column comes back parsed;
 * a write sends it as JSON text, because node-pg sends a JS array as a
 * Postgres array literal. An object it sends as JSON, so an object column
 * takes either.
 */
export type JsonText = string;

/** A timestamp a write may set from the database's clock (`db.fn.now()`). */
export type Timestamp = Date | Knex.Raw;
