import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import { recordEvent, type OutboundEventType } from '../outbound/events.js';

/** The subscription events of the catalogue (DESIGN 15). */
export type SubscriptionEventType = Extract<OutboundEventType, `subscription.${string}`>;

/** How a plan change moved the member, as subscription.changed says it. */
export type PlanChangeKind = 'upgrade' | 'downgrade' | 'product_change';

const ts = (d: Date | null | undefined) => (d ? formatTimestamp(d) : null);

/**
 * Writes a subscription event in the change's transaction, after the change: the order item as it now
 * is (status, period end, product, tier) with its member, plus what the transition adds (`extra`).
 */
export async function recordSubscriptionEvent(
  trx: Kysely<DB>,
  clock: Clock,
  type: SubscriptionEventType,
  orderItemId: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const row = await trx
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .leftJoin('usr_users', 'usr_user_id', 'odi_usr_user_id')
    .select([
      'odi_order_item_id',
      'odi_ord_order_id',
      'odi_usr_user_id',
      'usr_email',
      'pro_product_id',
      'pro_name',
      'sbt_subscription_tier_id',
      'sbt_name',
      'sbt_tier_level',
      'odi_payment_source',
      'odi_subscription_status',
      'odi_subscription_period_end',
      'odi_subscription_cancel_at_period_end',
      'odi_price',
      'odi_currency',
    ])
    .where('odi_order_item_id', '=', orderItemId)
    .executeTakeFirst();
  if (!row) return;
  const userId = row.odi_usr_user_id === null ? null : Number(row.odi_usr_user_id);
  const data = {
    user_id: userId,
    email: row.usr_email ?? null,
    order_item_id: Number(row.odi_order_item_id),
    order_id: Number(row.odi_ord_order_id),
    product: { id: Number(row.pro_product_id), name: row.pro_name },
    tier: row.sbt_subscription_tier_id === null ? null : { id: Number(row.sbt_subscription_tier_id), name: row.sbt_name, level: Number(row.sbt_tier_level) },
    source: row.odi_payment_source,
    status: row.odi_subscription_status,
    period_end: ts(row.odi_subscription_period_end),
    cancel_at_period_end: row.odi_subscription_cancel_at_period_end === true,
    price: row.odi_price === null ? null : Number(row.odi_price),
    currency: row.odi_currency,
    ...extra,
  };
  await recordEvent(trx, clock, type, data, { userId });
}

/** order.paid, in the transaction that made the order paid: the order, its member and its items. */
export async function recordOrderPaid(trx: Kysely<DB>, clock: Clock, orderId: number): Promise<void> {
  const order = await trx
    .selectFrom('ord_orders')
    .leftJoin('usr_users', 'usr_user_id', 'ord_usr_user_id')
    .select(['ord_order_id', 'ord_usr_user_id', 'usr_email', 'ord_total_cost', 'ord_currency', 'ord_payment_source'])
    .where('ord_order_id', '=', orderId)
    .executeTakeFirst();
  if (!order) return;
  const items = await trx
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select(['odi_order_item_id', 'pro_product_id', 'pro_name', 'odi_price', 'odi_is_subscription'])
    .where('odi_ord_order_id', '=', orderId)
    .orderBy('odi_order_item_id')
    .limit(50)
    .execute();
  const userId = order.ord_usr_user_id === null ? null : Number(order.ord_usr_user_id);
  await recordEvent(
    trx,
    clock,
    'order.paid',
    {
      order_id: Number(order.ord_order_id),
      user_id: userId,
      email: order.usr_email ?? null,
      total: order.ord_total_cost === null ? null : Number(order.ord_total_cost),
      currency: order.ord_currency,
      source: order.ord_payment_source,
      items: items.map((i) => ({
        order_item_id: Number(i.odi_order_item_id),
        product: { id: Number(i.pro_product_id), name: i.pro_name },
        price: i.odi_price === null ? null : Number(i.odi_price),
        is_subscription: i.odi_is_subscription === true,
      })),
    },
    { userId },
  );
}

/** The order an item belongs to. */
export async function orderOfItem(trx: Kysely<DB>, orderItemId: number): Promise<number> {
  const row = await trx.selectFrom('odi_order_items').select('odi_ord_order_id').where('odi_order_item_id', '=', orderItemId).executeTakeFirstOrThrow();
  return Number(row.odi_ord_order_id);
}

/** Whether moving from one product to another is an upgrade or a downgrade (by tier level), else a product change. */
export async function planChangeKind(trx: Kysely<DB>, fromProductId: number, toProductId: number): Promise<PlanChangeKind> {
  const levels = await trx
    .selectFrom('pro_products')
    .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .select(['pro_product_id', 'sbt_tier_level'])
    .where('pro_product_id', 'in', [fromProductId, toProductId])
    .execute();
  const level = (id: number) => levels.find((l) => Number(l.pro_product_id) === id)?.sbt_tier_level;
  const from = level(fromProductId);
  const to = level(toProductId);
  if (from === undefined || to === undefined || Number(from) === Number(to)) return 'product_change';
  return Number(to) > Number(from) ? 'upgrade' : 'downgrade';
}
