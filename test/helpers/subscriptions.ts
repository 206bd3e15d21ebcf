import type { TestApp } from './app.js';

let seq = 0;

/** A product for sale as a subscription, linked to a tier (or not), with extra columns as given. */
export async function subscriptionProduct(
  t: TestApp,
  o: { name?: string; tierId: number | null; period?: 'day' | 'week' | 'month' | 'year' | null; active?: boolean; extra?: Record<string, unknown> },
): Promise<number> {
  const now = t.clock.now();
  const row = await (t.services.db as any)
    .insertInto('pro_products')
    .values({
      pro_name: o.name ?? `Plan ${++seq}`,
      pro_link: `plan-${++seq}-${Math.random().toString(36).slice(2)}`,
      pro_is_active: o.active ?? true,
      pro_sbt_subscription_tier_id: o.tierId,
      pro_subscription_period: o.period === undefined ? 'month' : o.period,
      pro_create_time: now,
      pro_update_time: now,
      ...o.extra,
    })
    .returning('pro_product_id')
    .executeTakeFirstOrThrow();
  return Number(row.pro_product_id);
}

export interface SubscriptionFixture {
  source: 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store';
  /** Minor units. */
  price: number;
  periodStart: Date;
  periodEnd: Date;
  status?: 'active' | 'cancelled' | 'expired' | 'refunded' | 'replaced';
  currency?: string;
  extra?: Record<string, unknown>;
}

/** A paid order with one subscription order item, as checkout and webhooks record them. */
export async function insertSubscription(t: TestApp, userId: number, productId: number, s: SubscriptionFixture): Promise<number> {
  const db = t.services.db as any;
  const now = t.clock.now();
  const order = await db
    .insertInto('ord_orders')
    .values({ ord_usr_user_id: userId, ord_total_cost: s.price, ord_currency: s.currency ?? 'usd', ord_create_time: now, ord_update_time: now })
    .returning('ord_order_id')
    .executeTakeFirstOrThrow();
  const item = await db
    .insertInto('odi_order_items')
    .values({
      odi_ord_order_id: order.ord_order_id,
      odi_pro_product_id: productId,
      odi_usr_user_id: userId,
      odi_price: s.price,
      odi_currency: s.currency ?? 'usd',
      odi_is_subscription: true,
      odi_payment_source: s.source,
      odi_subscription_status: s.status ?? 'active',
      odi_subscription_period_start: s.periodStart,
      odi_subscription_period_end: s.periodEnd,
      odi_subscription_cancel_at_period_end: s.status === 'cancelled',
      odi_create_time: now,
      odi_update_time: now,
      ...s.extra,
    })
    .returning('odi_order_item_id')
    .executeTakeFirstOrThrow();
  return Number(item.odi_order_item_id);
}

/** An order item as stored. */
export async function orderItem(t: TestApp, id: number): Promise<Record<string, any>> {
  return (t.services.db as any).selectFrom('odi_order_items').selectAll().where('odi_order_item_id', '=', id).executeTakeFirstOrThrow();
}
