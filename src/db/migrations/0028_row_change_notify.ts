import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Every write to a table that servers cache rows of notifies 'gatehouse_changes' with '<table>:<primary
// key>' per row (insert, update, delete) and '<table>' for a truncate, from whichever process wrote it:
// another node, the CLI through the embedded database's socket, psql. PostgreSQL delivers notifications
// at commit and folds equal ones within a transaction. Servers forget the named rows (and what was
// derived from the table) on these, so every cached read changes at once. This replaces the statement
// triggers of 0013, which notified a channel of their own with no payload.
/** The cached tables and their key columns (0043 replaces their triggers). */
export const CACHED: Readonly<Record<string, string>> = {
  apk_api_keys: 'apk_api_key_id',
  usr_users: 'usr_user_id',
  grm_group_members: 'grm_group_member_id',
  sbt_subscription_tiers: 'sbt_subscription_tier_id',
  stg_settings: 'stg_setting_id',
  plg_plugins: 'plg_name',
  pst_posts: 'pst_post_id',
  pag_pages: 'pag_page_id',
  pro_products: 'pro_product_id',
  evt_events: 'evt_event_id',
};
const PRINCIPAL_TABLES_0013 = ['apk_api_keys', 'usr_users', 'grm_group_members', 'sbt_subscription_tiers'];

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    ...PRINCIPAL_TABLES_0013.map((table) => `drop trigger if exists ${table}_principal_changes on ${table}`),
    `drop function if exists gh_notify_principal_changes()`,
    `create or replace function gh_notify_row_change() returns trigger language plpgsql as $$
     begin
       perform pg_notify('gatehouse_changes', TG_TABLE_NAME || ':' ||
         ((case when TG_OP = 'DELETE' then to_jsonb(OLD) else to_jsonb(NEW) end) ->> TG_ARGV[0]));
       return null;
     end
     $$`,
    `create or replace function gh_notify_table_change() returns trigger language plpgsql as $$
     begin
       perform pg_notify('gatehouse_changes', TG_TABLE_NAME);
       return null;
     end
     $$`,
    ...Object.entries(CACHED).flatMap(([table, key]) => [
      `create trigger ${table}_row_changes after insert or update or delete on ${table}
       for each row execute function gh_notify_row_change('${key}')`,
      `create trigger ${table}_truncated after truncate on ${table}
       for each statement execute function gh_notify_table_change()`,
    ]),
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
