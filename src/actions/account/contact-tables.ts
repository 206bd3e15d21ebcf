import type { Generated, Kysely } from 'kysely';
import type { DB, GeneratedTimestamp, Timestamp } from '../../db/types.js';

// The Address and PhoneNumber tables belong to the model registry (migration 0002); the account actions
// write them directly, so their columns are typed here.
export interface UsersAddrsTable {
  usa_users_addr_id: Generated<number>;
  usa_type: number | null;
  usa_address1: string | null;
  usa_address2: string | null;
  usa_city: string | null;
  usa_state: string | null;
  usa_zip_code_id: string | null;
  usa_usr_user_id: number | null;
  usa_is_default: boolean | null;
  usa_timezone: string | null;
  usa_cco_country_code_id: number | null;
  usa_create_time: GeneratedTimestamp;
  usa_update_time: GeneratedTimestamp;
  usa_delete_time: Timestamp | null;
}

export interface PhoneNumbersTable {
  phn_phone_number_id: Generated<number>;
  phn_phone_number: string;
  phn_is_private: boolean | null;
  phn_is_verified: boolean | null;
  phn_usr_user_id: number;
  phn_phone_carrier: string | null;
  phn_is_default: boolean | null;
  phn_cco_country_code_id: number | null;
  phn_create_time: GeneratedTimestamp;
  phn_update_time: GeneratedTimestamp;
  phn_delete_time: Timestamp | null;
}

export type ContactDB = DB & { usa_users_addrs: UsersAddrsTable; phn_phone_numbers: PhoneNumbersTable };

export function contactDb(db: Kysely<DB>): Kysely<ContactDB> {
  return db.withTables<{ usa_users_addrs: UsersAddrsTable; phn_phone_numbers: PhoneNumbersTable }>();
}
