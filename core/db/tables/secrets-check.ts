import type { Knex } from 'knex';

export const SecretsCheckTableName = 'secrets_check';

/** One row (id 1): a value encrypted with SECRETS_KEY at first start (core/crypto/secrets-check.ts). */
export type DbSecretsCheck = {
  id: number;
  check_value: string;
  created_at: Date;
};
export type DbSecretsCheckInsert = Pick<DbSecretsCheck, 'id' | 'check_value'>;
export type DbSecretsCheckUpdate = Partial<Pick<DbSecretsCheck, 'check_value'>>;

export type SecretsCheckTable = Knex.CompositeTableType<
  DbSecretsCheck,
  DbSecretsCheckInsert,
  DbSecretsCheckUpdate
>;
