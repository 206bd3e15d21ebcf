import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Member-facing subscription lifecycle (change tier, cancel, reactivate, period end). A product names
// its billing period (the summary's "period"); an order item records when its paid period began (the
// base of a prorated refund) and the lower-tier product of a downgrade scheduled for its period end, and when that applies.
// Independent of the store's 0008, so the two may apply in either order.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pro_products add column if not exists pro_subscription_period varchar(8)
      check (pro_subscription_period in ('day', 'week', 'month', 'year'))`,
    `alter table odi_order_items add column if not exists odi_subscription_period_start timestamp(6)`,
    `alter table odi_order_items add column if not exists odi_scheduled_pro_product_id int8 references pro_products(pro_product_id)`,
    // When the scheduled downgrade applies: the period end at the time it was asked for (a renewal that
    // moves the period end on must not postpone it).
    `alter table odi_order_items add column if not exists odi_scheduled_change_time timestamp(6)`,
    // The period-end task looks for cancelled items and scheduled downgrades that are due.
    `create index if not exists odi_order_items_cancelled_due on odi_order_items (odi_subscription_period_end)
      where odi_subscription_status = 'cancelled'`,
    `create index if not exists odi_order_items_downgrade_due on odi_order_items (odi_scheduled_change_time)
      where odi_scheduled_change_time is not null`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
