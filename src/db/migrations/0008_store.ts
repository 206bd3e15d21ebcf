import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// The store (DESIGN 7). Products carry each billing source's product reference and a price in minor
// units. An order item records the provider's subscription reference (one per source and reference),
// the provider time of the latest event applied to it (older events never undo newer state), and when a
// purchase was refused for tier purposes because another source was already active for the user.
// Store users get a random account token that native apps pass to the app stores (appAccountToken,
// obfuscatedExternalAccountId), so store notifications name our user without exposing the user id.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pro_products add column pro_card_price_id varchar(255)`,
    `alter table pro_products add column pro_wallet_plan_id varchar(255)`,
    `alter table pro_products add column pro_ios_product_id varchar(255)`,
    `alter table pro_products add column pro_android_product_id varchar(255)`,
    `alter table pro_products add column pro_price int8 check (pro_price >= 0)`,
    `alter table pro_products add column pro_currency varchar(3) not null default 'usd'`,
    `create index pro_products_card_price on pro_products (pro_card_price_id)`,
    `create index pro_products_wallet_plan on pro_products (pro_wallet_plan_id)`,
    `create index pro_products_ios_product on pro_products (pro_ios_product_id)`,
    `create index pro_products_android_product on pro_products (pro_android_product_id)`,
    `alter table odi_order_items add column odi_subscription_reference varchar(255)`,
    `alter table odi_order_items add column odi_last_event_time timestamp(6)`,
    `alter table odi_order_items add column odi_source_conflict_time timestamp(6)`,
    `create unique index odi_order_items_source_reference on odi_order_items (odi_payment_source, odi_subscription_reference)
      where odi_subscription_reference is not null`,
    `create index odi_order_items_conflicts on odi_order_items (odi_source_conflict_time) where odi_source_conflict_time is not null`,
    `alter table ord_orders add column ord_payment_source varchar(20)
      check (ord_payment_source in ('card_processor', 'wallet_provider', 'ios_store', 'android_store'))`,
    `alter table wbh_webhook_logs add column wbh_event_time timestamp(6)`,
    `alter table wbh_webhook_logs add column wbh_update_time timestamp(6)`,
    `create table sat_store_account_tokens (
      sat_usr_user_id int8 primary key references usr_users(usr_user_id),
      sat_token varchar(64) not null unique,
      sat_create_time timestamp(6) not null default now()
    )`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
