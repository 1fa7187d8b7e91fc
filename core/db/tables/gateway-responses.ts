import type { Knex } from 'knex';
import type { JsonText } from './columns.js';

export const GatewayResponsesTableName = 'gateway_responses';

/**
 * A stored answer of the gateway's Responses API. The JSON columns hold the
 * Responses API's own item and usage shapes, as the caller sees them.
 */
export type DbGatewayResponse = {
  /** `resp_…`, made by the gateway. */
  id: string;
  virtual_key_id: string;
  model: string;
  status: string;
  /** The whole conversation the response answered, earlier turns included. */
  input_items: unknown[];
  output_items: unknown[];
  usage: Record<string, unknown> | null;
  /** The rest of the response object as answered: what it echoes of its request, incomplete_details… */
  response: Record<string, unknown>;
  created_at: Date;
  expires_at: Date;
};
/** A response to store: its expiry is set from the retention when it is written. */
export type DbGatewayResponseInsert = Omit<DbGatewayResponse, 'expires_at'>;
/** What a write sends: jsonb columns as JSON text. */
export type DbGatewayResponseWrite = {
  id: string;
  virtual_key_id: string;
  model: string;
  status: string;
  input_items: JsonText;
  output_items: JsonText;
  usage?: JsonText | null;
  response: JsonText;
  created_at: Date;
  expires_at: Date | Knex.Raw;
};

export type GatewayResponsesTable = Knex.CompositeTableType<
  DbGatewayResponse,
  DbGatewayResponseWrite,
  Partial<DbGatewayResponseWrite>
>;
