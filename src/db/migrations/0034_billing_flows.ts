import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Billing truth (DESIGN 14).
// The payments that paid for a subscription's periods: the period's own payment (a checkout, a renewal
// invoice, a wallet sale) and any upgrade's prorated charge. An immediate prorated cancellation refunds
// the unused share of each, never more than it, and counts what it refunded so a retry does not repeat
// it. A wallet refund names only its sale (or capture): the sale's row finds its subscription.
// A subscription whose grant was skipped by the upgrade-only rule holds no tier: odi_tier_skipped_time
// marks it, so its end removes nothing.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table sbp_subscription_payments (
      sbp_subscription_payment_id bigserial primary key,
      sbp_odi_order_item_id int8 not null references odi_order_items(odi_order_item_id),
      sbp_source varchar(20) not null check (sbp_source in ('card_processor', 'wallet_provider', 'ios_store', 'android_store')),
      sbp_kind varchar(10) not null check (sbp_kind in ('period', 'upgrade')),
      sbp_payment_reference varchar(255),
      sbp_invoice_reference varchar(255),
      sbp_amount int8 not null check (sbp_amount >= 0),
      sbp_currency varchar(3) not null,
      sbp_covers_from timestamp(6) not null,
      sbp_covers_until timestamp(6),
      sbp_refunded_amount int8 not null default 0 check (sbp_refunded_amount >= 0),
      sbp_create_time timestamp(6) not null default now()
    )`,
    `create index sbp_subscription_payments_item on sbp_subscription_payments (sbp_odi_order_item_id)`,
    `create unique index sbp_subscription_payments_reference on sbp_subscription_payments (sbp_source, sbp_payment_reference)
      where sbp_payment_reference is not null`,
    `alter table odi_order_items add column odi_tier_skipped_time timestamp(6)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
