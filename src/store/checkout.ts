import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { businessError } from '../http/errors.js';
import { billingSourceStatuses } from '../settings/billing-sources.js';
import type { Settings } from '../settings/store.js';
import type { StoreSystem } from './index.js';
import { checkEventPlaces } from './event-tickets.js';
import { ITEM_STATUS, ORDER_STATUS } from './orders.js';
import type { CheckoutSessionRequest } from './providers/card-processor.js';

export interface CheckoutLine {
  product_id: number;
  quantity: number;
}

export interface CheckoutOptions {
  /** Where the card processor sends the buyer after paying / after giving up (absolute URLs). */
  successUrl: string;
  cancelUrl: string;
  customerEmail?: string;
}

interface PricedLine {
  productId: number;
  name: string;
  quantity: number;
  /** Minor units per unit. */
  unitPrice: number;
  currency: string;
  tierId: number | null;
  cardPriceId: string | null;
  /** Sold as a card-processor subscription: it has a card price id and a tier link. */
  subscription: boolean;
}

async function priceLines(db: Kysely<DB>, lines: CheckoutLine[]): Promise<PricedLine[]> {
  if (lines.length === 0) throw businessError('The cart is empty');
  const ids = [...new Set(lines.map((l) => l.product_id))];
  const products = await db
    .selectFrom('pro_products')
    .select(['pro_product_id', 'pro_name', 'pro_is_active', 'pro_delete_time', 'pro_price', 'pro_currency', 'pro_sbt_subscription_tier_id', 'pro_card_price_id'])
    .where('pro_product_id', 'in', ids)
    .execute();
  const byId = new Map(products.map((p) => [Number(p.pro_product_id), p]));
  const priced = lines.map((l): PricedLine => {
    const p = byId.get(l.product_id);
    if (!p || p.pro_delete_time !== null || p.pro_is_active !== true) throw businessError(`Product ${l.product_id} is not available`);
    if (!Number.isInteger(l.quantity) || l.quantity < 1) throw businessError(`Quantity of ${p.pro_name} must be at least 1`);
    if (p.pro_price === null) throw businessError(`${p.pro_name} has no price`);
    const tierId = p.pro_sbt_subscription_tier_id === null ? null : Number(p.pro_sbt_subscription_tier_id);
    return {
      productId: Number(p.pro_product_id),
      name: p.pro_name,
      quantity: l.quantity,
      unitPrice: Number(p.pro_price),
      currency: p.pro_currency.toLowerCase(),
      tierId,
      cardPriceId: p.pro_card_price_id,
      subscription: p.pro_card_price_id !== null && tierId !== null,
    };
  });
  if (new Set(priced.map((l) => l.currency)).size > 1) throw businessError('All products in one checkout must share a currency');
  const subscriptions = priced.filter((l) => l.subscription);
  if (subscriptions.length > 1 || subscriptions.some((l) => l.quantity !== 1)) throw businessError('A checkout holds at most one subscription, with quantity 1');
  return priced;
}

/**
 * Starts a card-processor checkout for a user's cart: a pending Order with one OrderItem per unit
 * (prices in minor units from pro_price), then a hosted Checkout Session through the stripe SDK, mode
 * 'subscription' when a line is a tier subscription (card price id and tier link), else 'payment'.
 * The session's metadata names user_id, product_id (the tier-linked line, else the first) and order_id;
 * its checkout.session.completed webhook completes this order instead of creating one.
 * Business refusals are 422 ActionError. Once the order exists, a card processor that is not configured
 * or that fails to start the session marks the order failed (ord_error says why, for the admin) and is
 * answered 422 ActionError too (data.reason 'card_processor_not_configured' or 'checkout_failed', with
 * data.order_id): never a 500.
 */
export async function createCheckout(
  db: Kysely<DB>,
  services: { clock: Clock; settings: Settings; store: StoreSystem },
  userId: number,
  lines: CheckoutLine[],
  opts: CheckoutOptions,
): Promise<{ orderId: number; url: string }> {
  if (!services.store.active()) throw businessError('The store is not open');
  const priced = await priceLines(db, lines);
  await checkEventPlaces(db, userId, priced.map((l) => l.productId), services.clock.now());
  const now = services.clock.now();
  const currency = priced[0]!.currency;
  const total = priced.reduce((sum, l) => sum + l.unitPrice * l.quantity, 0);
  const primary = priced.find((l) => l.tierId !== null) ?? priced[0]!;

  const orderId = await db.transaction().execute(async (trx) => {
    const order = await trx
      .insertInto('ord_orders')
      .values({
        ord_usr_user_id: userId,
        ord_timestamp: now,
        ord_total_cost: total,
        ord_currency: currency,
        ord_status: ORDER_STATUS.pending,
        ord_payment_method: 'card_processor',
        ord_payment_source: 'card_processor',
        ord_raw_cart: JSON.stringify(lines.map((l) => ({ product_id: l.product_id, quantity: l.quantity }))),
        ord_create_time: now,
        ord_update_time: now,
      })
      .returning('ord_order_id')
      .executeTakeFirstOrThrow();
    const id = Number(order.ord_order_id);
    const items = priced.flatMap((l) =>
      Array.from({ length: l.quantity }, () => ({
        odi_ord_order_id: id,
        odi_pro_product_id: l.productId,
        odi_product_info: l.name,
        odi_price: l.unitPrice,
        odi_currency: currency,
        odi_status: ITEM_STATUS.pending,
        odi_status_change_time: now,
        odi_usr_user_id: userId,
        odi_is_subscription: l.subscription,
        odi_create_time: now,
        odi_update_time: now,
      })),
    );
    // The primary line's item first: the completing webhook finds it as the order's item for that product.
    items.sort((a, b) => Number(b.odi_pro_product_id === primary.productId) - Number(a.odi_pro_product_id === primary.productId));
    await trx.insertInto('odi_order_items').values(items).execute();
    return id;
  });

  const card = billingSourceStatuses(services.settings).find((s) => s.source === 'card_processor')!;
  if (!card.configured) {
    await markFailed(db, orderId, `card processor not configured: ${card.missing.join('; ')}`, now);
    throw businessError(`Card payments are not set up on this site yet, so checkout cannot start. Nothing was charged; your order #${orderId} is kept as failed.`, {
      reason: 'card_processor_not_configured',
      order_id: orderId,
    });
  }

  const metadata = { user_id: String(userId), product_id: String(primary.productId), order_id: String(orderId) };
  const request: CheckoutSessionRequest = {
    mode: priced.some((l) => l.subscription) ? 'subscription' : 'payment',
    lineItems: priced.map((l) => (l.subscription ? { price: l.cardPriceId!, quantity: 1 } : { name: l.name, unitAmount: l.unitPrice, currency, quantity: l.quantity })),
    metadata,
    successUrl: opts.successUrl,
    cancelUrl: opts.cancelUrl,
    ...(opts.customerEmail ? { customerEmail: opts.customerEmail } : {}),
  };
  try {
    const session = await services.store.deps.cardProcessor(services.settings).createCheckoutSession(request);
    await db
      .updateTable('ord_orders')
      .set({ ord_stripe_session_id: session.id, ...(session.paymentIntentId ? { ord_stripe_payment_intent_id: session.paymentIntentId } : {}), ord_update_time: now })
      .where('ord_order_id', '=', orderId)
      .execute();
    return { orderId, url: session.url };
  } catch (err) {
    await markFailed(db, orderId, err instanceof Error ? err.message : String(err), now);
    throw businessError(`The card processor could not start the checkout. Nothing was charged; your order #${orderId} is kept as failed. Please try again later.`, {
      reason: 'checkout_failed',
      order_id: orderId,
    });
  }
}

async function markFailed(db: Kysely<DB>, orderId: number, why: string, now: Date): Promise<void> {
  await db
    .updateTable('ord_orders')
    .set({ ord_status: ORDER_STATUS.failed, ord_error: why.slice(0, 255), ord_update_time: now })
    .where('ord_order_id', '=', orderId)
    .execute();
}
