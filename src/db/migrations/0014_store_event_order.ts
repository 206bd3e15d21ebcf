import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Store events that cannot be applied when they arrive (DESIGN 13).
// A verified event kept as not applied carries its reason in the webhook log: its user or product could
// not be resolved, or the store was inactive. It is listed until the operator replays it, and the replay
// time makes it apply once.
// A removal (expiry, cancellation, refund) or status change that names a subscription we have not seen
// yet is kept as a pending event under every provider reference it gives (subscription, invoice,
// payment intent), as the processor normalised it, and applied when the purchase with one of those
// references arrives. Refunds find their purchase by payment intent or invoice, so those are indexed.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table wbh_webhook_logs add column wbh_unresolved_reason varchar(32)
      check (wbh_unresolved_reason in ('unknown_user', 'unknown_product', 'store_inactive'))`,
    `alter table wbh_webhook_logs add column wbh_replay_time timestamp(6)`,
    `create index wbh_webhook_logs_unresolved on wbh_webhook_logs (wbh_create_time)
      where wbh_unresolved_reason is not null and wbh_replay_time is null`,
    `create table spe_store_pending_events (
      spe_store_pending_event_id bigserial primary key,
      spe_wbh_webhook_log_id int8 not null references wbh_webhook_logs(wbh_webhook_log_id),
      spe_source varchar(20) not null check (spe_source in ('card_processor', 'wallet_provider', 'ios_store', 'android_store')),
      spe_reference varchar(255) not null,
      spe_event jsonb not null,
      spe_event_time timestamp(6) not null,
      spe_applied_time timestamp(6),
      spe_odi_order_item_id int8 references odi_order_items(odi_order_item_id),
      spe_create_time timestamp(6) not null default now()
    )`,
    `create index spe_store_pending_events_open on spe_store_pending_events (spe_source, spe_reference) where spe_applied_time is null`,
    `create index spe_store_pending_events_log on spe_store_pending_events (spe_wbh_webhook_log_id)`,
    // A refund names the payment it returns: the purchase's payment intent or invoice.
    `create index ord_orders_stripe_payment_intent on ord_orders (ord_stripe_payment_intent_id) where ord_stripe_payment_intent_id is not null`,
    `create index ord_orders_stripe_invoice on ord_orders (ord_stripe_invoice_id) where ord_stripe_invoice_id is not null`,
    `create index odi_order_items_stripe_invoice on odi_order_items (odi_stripe_foreign_invoice_id) where odi_stripe_foreign_invoice_id is not null`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
