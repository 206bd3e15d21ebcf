import type { Kysely } from 'kysely';
import type { DB, PaymentSource, SubscriptionStatus } from '../db/types.js';

/** ord_status values. */
export const ORDER_STATUS = { pending: 1, paid: 2, failed: 3, refunded: 4 } as const;
/** odi_status values. */
export const ITEM_STATUS = { pending: 1, paid: 2, refunded: 4 } as const;

/** Subscription statuses under which an order item can still hold the user's tier (DESIGN 14: in_grace keeps it). */
export const LIVE_STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled', 'in_grace'];
/** Billing states a provider can recover from (back to active through the grant path). */
export const RECOVERABLE_STATUSES: readonly SubscriptionStatus[] = ['in_grace', 'on_hold', 'paused'];

export interface OrderItemRow {
  odi_order_item_id: number;
  odi_ord_order_id: number;
  odi_pro_product_id: number;
  odi_usr_user_id: number | null;
  odi_payment_source: PaymentSource | null;
  odi_subscription_reference: string | null;
  odi_subscription_status: SubscriptionStatus | null;
  odi_subscription_period_end: Date | null;
  odi_last_event_time: Date | null;
  odi_source_conflict_time: Date | null;
  /** Set when the upgrade-only rule skipped its grant: it holds no tier. */
  odi_tier_skipped_time: Date | null;
  /** Minor units paid for the item. */
  odi_price: number | null;
  odi_currency: string;
  /** The card processor's invoice of the current period (the checkout's first, then each renewal's). */
  odi_stripe_foreign_invoice_id: string | null;
  odi_subscription_grace_until: Date | null;
}

const ITEM_COLUMNS = [
  'odi_order_item_id',
  'odi_ord_order_id',
  'odi_pro_product_id',
  'odi_usr_user_id',
  'odi_payment_source',
  'odi_subscription_reference',
  'odi_subscription_status',
  'odi_subscription_period_end',
  'odi_last_event_time',
  'odi_source_conflict_time',
  'odi_tier_skipped_time',
  'odi_price',
  'odi_currency',
  'odi_stripe_foreign_invoice_id',
  'odi_subscription_grace_until',
] as const;

const normalise = (r: OrderItemRow): OrderItemRow => ({
  ...r,
  odi_order_item_id: Number(r.odi_order_item_id),
  odi_ord_order_id: Number(r.odi_ord_order_id),
  odi_pro_product_id: Number(r.odi_pro_product_id),
  odi_usr_user_id: r.odi_usr_user_id === null ? null : Number(r.odi_usr_user_id),
  odi_price: r.odi_price === null ? null : Number(r.odi_price),
});

/** Whether a lookup takes row locks: yes inside the applying transaction, no for a read before it. */
type Locking = { lock?: boolean };

/** The order item of a subscription (source and provider reference), locked for the caller's transaction. */
export async function findItemByReference(db: Kysely<DB>, source: PaymentSource, reference: string, o: Locking = {}): Promise<OrderItemRow | undefined> {
  const row = await db
    .selectFrom('odi_order_items')
    .select(ITEM_COLUMNS)
    .where('odi_payment_source', '=', source)
    .where('odi_subscription_reference', '=', reference)
    .$if(o.lock !== false, (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? normalise(row as OrderItemRow) : undefined;
}

/** An order item by id, locked unless told not to. */
export async function findItemById(db: Kysely<DB>, orderItemId: number, o: Locking = {}): Promise<OrderItemRow | undefined> {
  const row = await db
    .selectFrom('odi_order_items')
    .select(ITEM_COLUMNS)
    .where('odi_order_item_id', '=', orderItemId)
    .$if(o.lock !== false, (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? normalise(row as OrderItemRow) : undefined;
}

/** The order item of an order: the one for the product when given, else its first. Locked. */
export async function findItemOfOrder(db: Kysely<DB>, orderId: number, productId: number | null, o: Locking = {}): Promise<OrderItemRow | undefined> {
  let q = db.selectFrom('odi_order_items').select(ITEM_COLUMNS).where('odi_ord_order_id', '=', orderId);
  if (productId !== null) q = q.where('odi_pro_product_id', '=', productId);
  const row = await q
    .orderBy('odi_order_item_id')
    .limit(1)
    .$if(o.lock !== false, (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? normalise(row as OrderItemRow) : undefined;
}

/**
 * A card-processor purchase named by a payment: its payment intent (a one-time payment's reference, or
 * the one recorded on the order) or its invoice (the current period's on the item, or the checkout's
 * first on the order).
 */
export async function findItemByPayment(
  db: Kysely<DB>,
  source: PaymentSource,
  p: { paymentIntentId?: string | null; invoiceId?: string | null },
  o: Locking = {},
): Promise<OrderItemRow | undefined> {
  if (p.paymentIntentId) {
    const byRef = await findItemByReference(db, source, p.paymentIntentId, o);
    if (byRef) return byRef;
    const order = await db.selectFrom('ord_orders').select('ord_order_id').where('ord_stripe_payment_intent_id', '=', p.paymentIntentId).executeTakeFirst();
    if (order) return findItemOfOrder(db, Number(order.ord_order_id), null, o);
  }
  if (p.invoiceId) {
    const row = await db
      .selectFrom('odi_order_items')
      .select(ITEM_COLUMNS)
      .where('odi_payment_source', '=', source)
      .where('odi_stripe_foreign_invoice_id', '=', p.invoiceId)
      .$if(o.lock !== false, (q) => q.forUpdate())
      .executeTakeFirst();
    if (row) return normalise(row as OrderItemRow);
    const order = await db.selectFrom('ord_orders').select('ord_order_id').where('ord_stripe_invoice_id', '=', p.invoiceId).executeTakeFirst();
    if (order) return findItemOfOrder(db, Number(order.ord_order_id), null, o);
  }
  return undefined;
}

/** A product as the store prices and links it. */
export interface StoreProduct {
  productId: number;
  name: string;
  tierId: number | null;
  price: number | null;
  currency: string;
  cardPriceId: string | null;
}

export async function readProduct(db: Kysely<DB>, productId: number): Promise<StoreProduct | undefined> {
  const p = await db
    .selectFrom('pro_products')
    .select(['pro_product_id', 'pro_name', 'pro_sbt_subscription_tier_id', 'pro_price', 'pro_currency', 'pro_card_price_id', 'pro_delete_time'])
    .where('pro_product_id', '=', productId)
    .executeTakeFirst();
  if (!p) return undefined;
  return {
    productId: Number(p.pro_product_id),
    name: p.pro_name,
    tierId: p.pro_sbt_subscription_tier_id === null ? null : Number(p.pro_sbt_subscription_tier_id),
    price: p.pro_price === null ? null : Number(p.pro_price),
    currency: p.pro_currency,
    cardPriceId: p.pro_card_price_id,
  };
}

/** The column holding each source's product reference. */
export const PRODUCT_REFERENCE_COLUMN = {
  card_processor: 'pro_card_price_id',
  wallet_provider: 'pro_wallet_plan_id',
  ios_store: 'pro_ios_product_id',
  android_store: 'pro_android_product_id',
} as const satisfies Record<PaymentSource, string>;

/** The live product a source's product reference names (the oldest when several share it). */
export async function productForReference(db: Kysely<DB>, source: PaymentSource, reference: string): Promise<number | null> {
  const row = await db
    .selectFrom('pro_products')
    .select('pro_product_id')
    .where(PRODUCT_REFERENCE_COLUMN[source], '=', reference)
    .where('pro_delete_time', 'is', null)
    .orderBy('pro_product_id')
    .executeTakeFirst();
  return row ? Number(row.pro_product_id) : null;
}

/** Records a paid order with one subscription item (a purchase that no checkout of ours started). */
export async function createPaidOrder(
  db: Kysely<DB>,
  o: {
    userId: number;
    product: StoreProduct;
    source: PaymentSource;
    reference: string | null;
    amount: number | null;
    currency: string | null;
    at: Date;
    payment?: { sessionId?: string | null; paymentIntentId?: string | null; invoiceId?: string | null };
  },
): Promise<number> {
  const amount = o.amount ?? o.product.price;
  const currency = (o.currency ?? o.product.currency).toLowerCase().slice(0, 3);
  const order = await db
    .insertInto('ord_orders')
    .values({
      ord_usr_user_id: o.userId,
      ord_timestamp: o.at,
      ord_total_cost: amount,
      ord_currency: currency,
      ord_status: ORDER_STATUS.paid,
      ord_payment_method: o.source,
      ord_payment_source: o.source,
      ord_stripe_session_id: o.payment?.sessionId ?? null,
      ord_stripe_payment_intent_id: o.payment?.paymentIntentId ?? null,
      ord_stripe_invoice_id: o.payment?.invoiceId ?? null,
      ord_create_time: o.at,
      ord_update_time: o.at,
    })
    .returning('ord_order_id')
    .executeTakeFirstOrThrow();
  const item = await db
    .insertInto('odi_order_items')
    .values({
      odi_ord_order_id: Number(order.ord_order_id),
      odi_pro_product_id: o.product.productId,
      odi_product_info: o.product.name,
      odi_price: amount,
      odi_currency: currency,
      odi_status: ITEM_STATUS.paid,
      odi_status_change_time: o.at,
      odi_usr_user_id: o.userId,
      odi_is_subscription: o.product.tierId !== null,
      odi_payment_source: o.source,
      odi_subscription_reference: o.reference,
      odi_create_time: o.at,
      odi_update_time: o.at,
    })
    .returning('odi_order_item_id')
    .executeTakeFirstOrThrow();
  return Number(item.odi_order_item_id);
}
