import type { Kysely } from 'kysely';
import type { DB, SubscriptionStatus } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { recordTierChange } from '../tiers/change-tracking.js';
import type { GrantOutcome, TierMembershipService } from '../tiers/membership.js';
import { userForAccountToken } from './accounts.js';
import type { StoreEvent } from './events.js';
import { registerPaidEvents } from './event-tickets.js';
import {
  ITEM_STATUS,
  LIVE_STATUSES,
  ORDER_STATUS,
  createPaidOrder,
  findItemByPayment,
  findItemByReference,
  findItemOfOrder,
  productForReference,
  readProduct,
  type OrderItemRow,
} from './orders.js';

/** What applying one event did: a closed set, reported in the webhook's response and log. */
export type EventOutcome =
  | { outcome: 'granted'; orderItemId: number; grant: GrantOutcome['outcome'] }
  | { outcome: 'refused_other_source'; orderItemId: number; activeSources: string[] }
  | { outcome: 'not_tier_bearing'; orderItemId: number; status: SubscriptionStatus | null }
  | { outcome: 'removed'; orderItemId: number; removedTierIds: number[] }
  | { outcome: 'status_changed'; orderItemId: number; status: SubscriptionStatus }
  | { outcome: 'stale'; orderItemId: number }
  | { outcome: 'unknown_subscription' }
  | { outcome: 'unresolved'; missing: 'user' | 'product' };

export interface ProcessorDeps {
  clock: Clock;
  /** The one grant path and the one removal path, bound to the caller's transaction. */
  membership: TierMembershipService;
}

const reference = (itemId: number) => ({ type: 'order_item', id: itemId });

/** An item whose subscription can hold the user's tier: live, and not refused as a second source. */
const bearsTier = (item: OrderItemRow) =>
  item.odi_source_conflict_time === null && (item.odi_subscription_status === null || LIVE_STATUSES.includes(item.odi_subscription_status));

async function findItem(trx: Kysely<DB>, ev: StoreEvent): Promise<OrderItemRow | undefined> {
  if (ev.reference) {
    const byRef = await findItemByReference(trx, ev.source, ev.reference);
    if (byRef) return byRef;
  }
  const orderId = ev.orderId ?? ev.lookup?.orderId ?? null;
  if (orderId !== null) {
    const inOrder = await findItemOfOrder(trx, orderId, ev.product.productId ?? null);
    // A pending checkout order is completed by its purchase event; a paid one is matched only by its reference.
    if (inOrder && (inOrder.odi_subscription_reference === null || ev.kind !== 'purchase')) return inOrder;
  }
  if (ev.lookup) return findItemByPayment(trx, ev.source, ev.lookup);
  return undefined;
}

async function resolveUser(trx: Kysely<DB>, ev: StoreEvent, item: OrderItemRow | undefined): Promise<number | null> {
  if (item?.odi_usr_user_id) return item.odi_usr_user_id;
  if (ev.user.userId) {
    const row = await trx.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', '=', ev.user.userId).executeTakeFirst();
    return row ? Number(row.usr_user_id) : null;
  }
  if (ev.user.accountToken) return userForAccountToken(trx, ev.user.accountToken);
  return null;
}

async function resolveProduct(trx: Kysely<DB>, ev: StoreEvent, item: OrderItemRow | undefined): Promise<number | null> {
  if (ev.product.providerProductId) {
    const byRef = await productForReference(trx, ev.source, ev.product.providerProductId);
    if (byRef !== null) return byRef;
  }
  if (ev.product.productId) return ev.product.productId;
  return item?.odi_pro_product_id ?? null;
}

/**
 * Applies one normalised event inside the caller's transaction (the webhook's, which also holds its
 * log row). Every source ends here: purchases and renewals reach the one grant path, expiry,
 * cancellation and refund the one removal path. An event older than the latest applied to the same
 * subscription changes nothing. A purchase while another source's subscription holds the user's tier
 * is recorded, refused for tier purposes and flagged.
 */
export async function applyStoreEvent(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent): Promise<EventOutcome> {
  const item = await findItem(trx, ev);
  if (item?.odi_last_event_time && ev.eventTime.getTime() < item.odi_last_event_time.getTime()) {
    return { outcome: 'stale', orderItemId: item.odi_order_item_id };
  }
  switch (ev.kind) {
    case 'purchase':
    case 'renewal':
      return grant(trx, deps, ev, item);
    case 'cancellation_scheduled':
    case 'cancellation_undone':
      return item ? setCancellation(trx, deps, ev, item) : { outcome: 'unknown_subscription' };
    case 'expiry':
    case 'cancellation':
    case 'refund':
      return item ? remove(trx, deps, ev, item) : { outcome: 'unknown_subscription' };
  }
}

async function grant(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, found: OrderItemRow | undefined): Promise<EventOutcome> {
  const userId = await resolveUser(trx, ev, found);
  if (userId === null) return { outcome: 'unresolved', missing: 'user' };
  const productId = await resolveProduct(trx, ev, found);
  const product = productId === null ? undefined : await readProduct(trx, productId);
  if (!product) return { outcome: 'unresolved', missing: 'product' };
  const now = deps.clock.now();
  // Serialises this user's store changes: the other-source check below and the grant see one state.
  await trx.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', '=', userId).forUpdate().execute();

  let itemId: number;
  let wasBearing: boolean;
  if (found) {
    itemId = found.odi_order_item_id;
    wasBearing = bearsTier(found) && found.odi_subscription_status !== null;
    if (found.odi_subscription_reference === null) {
      await completeCheckoutOrder(trx, ev, found, now);
      await registerPaidEvents(trx, found.odi_ord_order_id, userId, now);
    }
  } else {
    itemId = await createPaidOrder(trx, { userId, product, source: ev.source, reference: ev.reference, amount: ev.amount ?? null, currency: ev.currency ?? null, at: now });
    wasBearing = false;
  }

  const conflict = found?.odi_source_conflict_time != null;
  const replaced = found?.odi_subscription_status === 'replaced';
  await trx
    .updateTable('odi_order_items')
    .set({
      ...(replaced || product.tierId === null ? {} : { odi_subscription_status: 'active' as const }),
      ...(ev.kind === 'purchase' ? { odi_subscription_cancel_at_period_end: false, odi_subscription_cancelled_time: null } : {}),
      ...(ev.periodEnd ? { odi_subscription_period_end: ev.periodEnd } : {}),
      ...(ev.payment?.invoiceId ? { odi_stripe_foreign_invoice_id: ev.payment.invoiceId } : {}),
      odi_last_event_time: ev.eventTime,
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', itemId)
    .execute();

  if (conflict) return { outcome: 'refused_other_source', orderItemId: itemId, activeSources: await activeSources(trx, userId, itemId) };
  if (replaced) return { outcome: 'not_tier_bearing', orderItemId: itemId, status: found!.odi_subscription_status };
  if (product.tierId === null) return { outcome: 'granted', orderItemId: itemId, grant: 'no_tier_link' };

  if (!wasBearing) {
    const others = await activeSources(trx, userId, itemId, ev.source);
    if (others.length > 0) {
      await trx.updateTable('odi_order_items').set({ odi_source_conflict_time: now }).where('odi_order_item_id', '=', itemId).execute();
      await recordTierChange(trx, {
        tierId: product.tierId,
        userId,
        oldTierId: null,
        newTierId: null,
        reason: 'purchase_refused_other_source',
        reference: reference(itemId),
        changedBy: null,
        at: now,
        metadata: { source: ev.source, event: ev.kind, product_id: product.productId, active_sources: others },
      });
      return { outcome: 'refused_other_source', orderItemId: itemId, activeSources: others };
    }
  }

  const result = await deps.membership.grantTierFromPurchase(userId, { productId: product.productId, tierId: product.tierId }, ev.source, reference(itemId), {
    event: ev.kind === 'renewal' ? 'renewal' : 'purchase',
  });
  if (result.outcome === 'joined' || result.outcome === 'moved') {
    // The subscription that held the previous tier is superseded by this one (an upgrade or a move).
    await trx
      .updateTable('odi_order_items')
      .set({ odi_subscription_status: 'replaced', odi_update_time: now })
      .where('odi_usr_user_id', '=', userId)
      .where('odi_order_item_id', '<>', itemId)
      .where('odi_subscription_status', 'in', [...LIVE_STATUSES])
      .where('odi_source_conflict_time', 'is', null)
      .where('odi_payment_source', 'is not', null)
      .execute();
  }
  return { outcome: 'granted', orderItemId: itemId, grant: result.outcome };
}

/** Our checkout's pending order, now paid: the item takes the provider's references. */
async function completeCheckoutOrder(trx: Kysely<DB>, ev: StoreEvent, item: OrderItemRow, now: Date): Promise<void> {
  await trx
    .updateTable('ord_orders')
    .set({
      ord_status: ORDER_STATUS.paid,
      ord_payment_method: ev.source,
      ord_payment_source: ev.source,
      ...(ev.payment?.sessionId ? { ord_stripe_session_id: ev.payment.sessionId } : {}),
      ...(ev.payment?.paymentIntentId ? { ord_stripe_payment_intent_id: ev.payment.paymentIntentId } : {}),
      ord_update_time: now,
    })
    .where('ord_order_id', '=', item.odi_ord_order_id)
    .execute();
  await trx
    .updateTable('odi_order_items')
    .set({ odi_payment_source: ev.source, odi_status: ITEM_STATUS.paid, odi_status_change_time: now, odi_update_time: now })
    .where('odi_ord_order_id', '=', item.odi_ord_order_id)
    .execute();
  await trx
    .updateTable('odi_order_items')
    .set({ odi_subscription_reference: ev.reference, ...(ev.source === 'card_processor' && ev.reference?.startsWith('sub_') ? { odi_stripe_subscription_id: ev.reference } : {}) })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
}

/** The other sources whose live, unrefused, tier-linked subscriptions the user holds. */
async function activeSources(trx: Kysely<DB>, userId: number, exceptItemId: number, exceptSource?: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select('odi_payment_source')
    .distinct()
    .where('odi_usr_user_id', '=', userId)
    .where('odi_order_item_id', '<>', exceptItemId)
    .where('odi_subscription_status', 'in', [...LIVE_STATUSES])
    .where('odi_source_conflict_time', 'is', null)
    .where('odi_payment_source', 'is not', null)
    .where('pro_sbt_subscription_tier_id', 'is not', null)
    .$if(exceptSource !== undefined, (q) => q.where('odi_payment_source', '<>', exceptSource as never))
    .execute();
  return rows.map((r) => String(r.odi_payment_source)).sort();
}

async function setCancellation(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const now = deps.clock.now();
  const scheduled = ev.kind === 'cancellation_scheduled';
  const live = item.odi_subscription_status !== null && LIVE_STATUSES.includes(item.odi_subscription_status);
  const status: SubscriptionStatus = live ? (scheduled ? 'cancelled' : 'active') : item.odi_subscription_status!;
  await trx
    .updateTable('odi_order_items')
    .set({
      odi_subscription_status: status,
      odi_subscription_cancel_at_period_end: scheduled,
      odi_subscription_cancelled_time: scheduled ? ev.eventTime : null,
      ...(ev.periodEnd ? { odi_subscription_period_end: ev.periodEnd } : {}),
      odi_last_event_time: ev.eventTime,
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  if (live && bearsTier(item) && item.odi_usr_user_id !== null) await deps.membership.setSubscriptionStatus(item.odi_usr_user_id, status);
  return { outcome: 'status_changed', orderItemId: item.odi_order_item_id, status };
}

async function remove(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const now = deps.clock.now();
  const refund = ev.kind === 'refund';
  const bearing = bearsTier(item) && item.odi_subscription_status !== null;
  // A replaced (superseded) subscription keeps that status when it later ends; a refund is always recorded.
  const status: SubscriptionStatus = refund ? 'refunded' : item.odi_subscription_status === 'replaced' || item.odi_subscription_status === 'refunded' ? item.odi_subscription_status : 'expired';
  await trx
    .updateTable('odi_order_items')
    .set({
      odi_subscription_status: status,
      ...(refund ? { odi_refund_time: ev.eventTime, odi_refund_amount: ev.amount ?? null, odi_status: ITEM_STATUS.refunded } : {}),
      ...(ev.periodEnd ? { odi_subscription_period_end: ev.periodEnd } : {}),
      odi_last_event_time: ev.eventTime,
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  if (refund) {
    await trx
      .updateTable('ord_orders')
      .set({ ord_refund_time: ev.eventTime, ord_refund_amount: ev.amount ?? null, ord_update_time: now })
      .where('ord_order_id', '=', item.odi_ord_order_id)
      .execute();
  }
  if (!bearing || item.odi_usr_user_id === null) return { outcome: 'not_tier_bearing', orderItemId: item.odi_order_item_id, status: item.odi_subscription_status };
  const reason = ev.kind === 'refund' ? 'refund' : ev.kind === 'cancellation' ? 'cancellation' : 'expiry';
  const removed = await deps.membership.removeFromAllTiers(item.odi_usr_user_id, reason, reference(item.odi_order_item_id), { source: ev.source });
  return { outcome: 'removed', orderItemId: item.odi_order_item_id, removedTierIds: removed.removedTierIds };
}

