import type { Knex } from 'knex';

export const GatewayRateWindowsTableName = 'gateway_rate_windows';

/** A virtual key's requests and tokens in one minute (its rate limits), shared by every replica. */
export type DbGatewayRateWindow = {
  virtual_key_id: string;
  window_start: Date;
  requests: number;
  /** What calls in flight reserved and settled calls used (bigint). */
  tokens: number;
};
export type DbGatewayRateWindowInsert = Pick<DbGatewayRateWindow, 'virtual_key_id' | 'window_start'> &
  Partial<Pick<DbGatewayRateWindow, 'requests' | 'tokens'>>;
export type DbGatewayRateWindowUpdate = Partial<Pick<DbGatewayRateWindow, 'requests' | 'tokens'>>;

export type GatewayRateWindowsTable = Knex.CompositeTableType<
  DbGatewayRateWindow,
  DbGatewayRateWindowInsert,
  DbGatewayRateWindowUpdate
>;
