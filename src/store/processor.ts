import type { Kysely } from 'kysely';
import type { DB, SubscriptionStatus } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import { recordSubscriptionStatusChange, recordTierChange } from '../tiers/change-tracking.js';
import { TierInputError } from '../tiers/errors.js';
import type { GrantOutcome, TierMembershipService } from '../tiers/membership.js';
import { userForAccountToken } from './accounts.js';
import type { StoreEvent, StoreEventKind } from './events.js';
import { registerPaidEvents } from './event-tickets.js';
import {
  ITEM_STATUS,
  LIVE_STATUSES,
  ORDER_STATUS,
  RECOVERABLE_STATUSES,
  createPaidOrder,
  findItemById,
  findItemByPayment,
  findItemByReference,
  findItemOfOrder,
  productForReference,
  readProduct,
  type OrderItemRow,
  type StoreProduct,
} from './orders.js';
import { orderOfItem, planChangeKind, recordOrderPaid, recordSubscriptionEvent } from './outbound-events.js';
import { recordSubscriptionPayment } from './payments.js';
import { eventReferences, keepPendingEvent, markPendingApplied, openPendingEvents, type PendingEvent } from './pending-events.js';

/** What applying one event did: a closed set, reported in the webhook's response and log. */
export type EventOutcome =
  | { outcome: 'granted'; orderItemId: number; grant: GrantOutcome['outcome'] }
  | { outcome: 'refused_other_source'; orderItemId: number; activeSources: string[] }
  | { outcome: 'not_tier_bearing'; orderItemId: number; status: SubscriptionStatus | null }
  | { outcome: 'removed'; orderItemId: number; removedTierIds: number[] }
  | { outcome: 'status_changed'; orderItemId: number; status: SubscriptionStatus }
  /** The product that renews changed (null: back to the current one); the tier moves when it renews. */
  | { outcome: 'renewal_product_changed'; orderItemId: number; productId: number | null }
  | { outcome: 'stale'; orderItemId: number }
  /** A billing-state event that does not apply to the subscription's state (e.g. a hold of an ended one). */
  | { outcome: 'unchanged'; orderItemId: number; status: SubscriptionStatus | null }
  /** A partial refund (or one of an earlier period's payment): recorded on the order and item, removes nothing. */
  | { outcome: 'refund_recorded'; orderItemId: number; amount: number | null }
  /** Names no subscription we know, nor any reference to wait for. */
  | { outcome: 'unknown_subscription' }
  /** Names a subscription we have not seen yet: kept under these references until its purchase arrives. */
  | { outcome: 'pending'; references: string[] }
  /** A purchase older than a removal that arrived before it: recorded, grants nothing. */
  | { outcome: 'superseded'; orderItemId: number; by: StoreEventKind }
  /** An event kept pending, applied now that its purchase has arrived. */
  | { outcome: 'pending_applied'; eventId: string; result: EventOutcome }
  | { outcome: 'payment_pending'; orderId: number | null }
  | { outcome: 'payment_failed'; orderId: number | null; cancelled: boolean }
  | { outcome: 'unresolved'; missing: 'user' | 'product' };

export interface ProcessorDeps {
  clock: Clock;
  /** The one grant path and the one removal path, bound to the caller's transaction. */
  membership: TierMembershipService;
  /** The webhook log row of the delivery being applied (a pending event points back to it). */
  webhookLogId: number;
}

const reference = (itemId: number) => ({ type: 'order_item', id: itemId });

/**
 * An item whose subscription can hold the user's tier: live, not refused as a second source, and not a
 * purchase whose grant the upgrade-only rule skipped (DESIGN 14: such a subscription never bears a tier).
 */
const bearsTier = (item: OrderItemRow) =>
  item.odi_source_conflict_time === null && item.odi_tier_skipped_time === null && (item.odi_subscription_status === null || LIVE_STATUSES.includes(item.odi_subscription_status));

/**
 * The watermark an event leaves: its provider time. A receipt time is our clock, not the provider's, so it
 * is compared with no provider time: it never becomes the watermark (a signed event arriving later is
 * judged against signed times only, so it never outranks one) and is never judged stale against one.
 */
const watermark = (ev: StoreEvent) => (ev.receiptTime ? {} : { odi_last_event_time: ev.eventTime });

/** An event older than the latest applied to the item changes nothing. */
const isStale = (ev: StoreEvent, item: OrderItemRow) =>
  !ev.receiptTime && item.odi_last_event_time !== null && ev.eventTime.getTime() < item.odi_last_event_time.getTime();

/**
 * Whether a refund takes the tier away: only a refund of the whole payment of the current period does
 * (DESIGN 13). A card refund of another invoice than the current period's is of an earlier payment;
 * otherwise the provider's word on whole or partial, else whether the amount covers the price.
 */
function refundRemoves(ev: StoreEvent, paid: { price: number | null; invoiceId: string | null }): boolean {
  const invoice = ev.lookup?.invoiceId ?? null;
  if (invoice !== null && paid.invoiceId !== null && invoice !== paid.invoiceId) return false;
  if (ev.refundWhole !== undefined && ev.refundWhole !== null) return ev.refundWhole;
  return ev.amount === null || ev.amount === undefined || paid.price === null || ev.amount >= paid.price;
}

async function findItem(trx: Kysely<DB>, ev: StoreEvent): Promise<OrderItemRow | undefined> {
  if (ev.reference) {
    const byRef = await findItemByReference(trx, ev.source, ev.reference);
    if (byRef) return byRef;
  }
  if (ev.replaces) {
    const replaced = await findItemByReference(trx, ev.source, ev.replaces);
    if (replaced) return replaced;
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
 * cancellation and whole refunds the one removal path. An event older than the latest applied to the
 * same subscription changes nothing. A purchase while another source's subscription holds the user's
 * tier is recorded, refused for tier purposes and flagged. An event that names a subscription we have
 * not seen yet is kept pending and applied when its purchase arrives; a purchase older than such a
 * removal grants nothing. The first outcome is the event's own; pending events it applied follow.
 */
export async function applyStoreEvent(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent): Promise<EventOutcome[]> {
  if (ev.kind === 'payment_pending' || ev.kind === 'payment_failed') return [await delayedPayment(trx, deps, ev)];
  const item = await findItem(trx, ev);
  if (item && isStale(ev, item)) return [{ outcome: 'stale', orderItemId: item.odi_order_item_id }];
  if (ev.kind === 'purchase' || ev.kind === 'renewal' || ev.kind === 'product_change') return grant(trx, deps, ev, item);
  if (!item) {
    const references = await keepPendingEvent(trx, deps.webhookLogId, ev, deps.clock.now());
    return [references.length > 0 ? { outcome: 'pending', references } : { outcome: 'unknown_subscription' }];
  }
  return [await applyToItem(trx, deps, ev, item)];
}

/** A removal or status change applied to the subscription's order item. */
async function applyToItem(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  switch (ev.kind) {
    case 'cancellation_scheduled':
    case 'cancellation_undone':
      return setCancellation(trx, deps, ev, item);
    case 'product_change_scheduled':
      return scheduleRenewalProduct(trx, deps, ev, item);
    case 'refund':
      return refundRemoves(ev, { price: item.odi_price, invoiceId: item.odi_stripe_foreign_invoice_id }) ? remove(trx, deps, ev, item) : recordRefund(trx, deps, ev, item);
    case 'in_grace':
      return enterGrace(trx, deps, ev, item);
    case 'on_hold':
    case 'paused':
      return suspend(trx, deps, ev, item, ev.kind);
    case 'recovery':
      return recover(trx, deps, ev, item);
    default:
      return remove(trx, deps, ev, item);
  }
}

/** Whether a pending event, as of the purchase it waited for, ends the subscription. */
function endsSubscription(p: PendingEvent, purchase: StoreEvent, paid: { price: number | null; invoiceId: string | null }): boolean {
  if (p.event.eventTime.getTime() < purchase.eventTime.getTime()) return false;
  if (p.event.kind === 'expiry' || p.event.kind === 'cancellation') return true;
  return p.event.kind === 'refund' && refundRemoves(p.event, paid);
}

async function grant(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, found: OrderItemRow | undefined): Promise<EventOutcome[]> {
  const userId = await resolveUser(trx, ev, found);
  if (userId === null) return [{ outcome: 'unresolved', missing: 'user' }];
  const productId = await resolveProduct(trx, ev, found);
  const product = productId === null ? undefined : await readProduct(trx, productId);
  if (!product) return [{ outcome: 'unresolved', missing: 'product' }];
  const now = deps.clock.now();
  // Serialises this user's store changes: the other-source check below and the grant see one state.
  await trx.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', '=', userId).forUpdate().execute();

  const pending = await openPendingEvents(trx, ev.source, eventReferences(ev));
  const paid = { price: found?.odi_price ?? ev.amount ?? product.price, invoiceId: ev.payment?.invoiceId ?? found?.odi_stripe_foreign_invoice_id ?? null };
  const endedBy = pending.find((p) => endsSubscription(p, ev, paid));

  let itemId: number;
  let wasBearing: boolean;
  // Our checkout's pending order, or a purchase we had not recorded: the order is paid now (order.paid).
  let paidOrderId: number | null = null;
  if (found && ev.replaces && ev.reference && found.odi_subscription_reference === ev.replaces) {
    // The store replaced the subscription (a plan change): the item goes on under the new reference.
    await trx.updateTable('odi_order_items').set({ odi_subscription_reference: ev.reference }).where('odi_order_item_id', '=', found.odi_order_item_id).execute();
  }
  if (found) {
    itemId = found.odi_order_item_id;
    wasBearing = bearsTier(found) && found.odi_subscription_status !== null;
    if (found.odi_subscription_reference === null) {
      await completeCheckoutOrder(trx, ev, found, now);
      paidOrderId = found.odi_ord_order_id;
      await registerPaidEvents(trx, found.odi_ord_order_id, userId, now);
    }
  } else {
    itemId = await createPaidOrder(trx, {
      userId,
      product,
      source: ev.source,
      reference: ev.reference,
      amount: ev.amount ?? null,
      currency: ev.currency ?? null,
      at: now,
      payment: ev.source === 'card_processor' ? ev.payment : undefined,
    });
    wasBearing = false;
    paidOrderId = await orderOfItem(trx, itemId);
  }

  const replaced = found?.odi_subscription_status === 'replaced';
  // The store renewed (or moved) the subscription with another product: the item names what the member
  // now pays for, so the summary names the new plan (DESIGN 14).
  const productChanged = found !== undefined && found.odi_pro_product_id !== product.productId;
  // The price per period: what the store says it charged; a card invoice's amount nets any proration
  // credit, so there the plan's price is what the member now pays.
  const price = ev.source === 'card_processor' ? (product.price ?? ev.amount ?? null) : (ev.amount ?? product.price);
  // A renewal (or the provider's word) after a billing issue or a pause: the subscription recovers.
  const recovering =
    (ev.kind === 'renewal' || ev.kind === 'recovery') && found?.odi_subscription_status != null && RECOVERABLE_STATUSES.includes(found.odi_subscription_status);
  const becomesActive = !(replaced || product.tierId === null || endedBy);
  await trx
    .updateTable('odi_order_items')
    .set({
      ...(productChanged
        ? { odi_pro_product_id: product.productId, odi_product_info: product.name, ...(price !== null ? { odi_price: price } : {}), odi_scheduled_pro_product_id: null, odi_scheduled_change_time: null }
        : {}),
      // A purchase that a removal already ended is recorded without becoming active: the removal then ends it.
      ...(becomesActive ? { odi_subscription_status: 'active' as const, odi_subscription_grace_until: null, odi_subscription_resume_time: null } : {}),
      ...(ev.kind === 'purchase' ? { odi_subscription_cancel_at_period_end: false, odi_subscription_cancelled_time: null } : {}),
      ...(ev.periodEnd ? { odi_subscription_period_end: ev.periodEnd } : {}),
      ...(ev.payment?.invoiceId ? { odi_stripe_foreign_invoice_id: ev.payment.invoiceId } : {}),
      ...watermark(ev),
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', itemId)
    .execute();

  await recordPeriodPayment(trx, ev, { itemId, found, product, now });
  await recordGrantEvents(trx, deps, ev, { itemId, found, product, paidOrderId, becomesActive, recovering, productChanged });
  if (recovering && becomesActive) {
    await recordSubscriptionStatusChange(trx, {
      orderItemId: itemId,
      userId,
      oldStatus: found!.odi_subscription_status,
      newStatus: 'active',
      reason: 'recovered',
      at: now,
      metadata: { source: ev.source, event: ev.kind, event_time: ev.eventTime.toISOString() },
    });
  }
  const outcome: EventOutcome = endedBy
    ? { outcome: 'superseded', orderItemId: itemId, by: endedBy.event.kind }
    : await grantTier(trx, deps, ev, { userId, product, itemId, found, wasBearing, replaced, productChanged, now, recovering });
  return [outcome, ...(await applyPending(trx, deps, pending, itemId))];
}

/**
 * The outbound events of a purchase, renewal, recovery or product change (DESIGN 15), each once per real
 * transition (a duplicate provider delivery never gets here): order.paid and subscription.created for a
 * new order, subscription.renewed when the paid period moved on, .recovered out of a billing issue, and
 * .changed when the subscription now pays for another product.
 */
async function recordGrantEvents(
  trx: Kysely<DB>,
  deps: ProcessorDeps,
  ev: StoreEvent,
  g: { itemId: number; found: OrderItemRow | undefined; product: StoreProduct; paidOrderId: number | null; becomesActive: boolean; recovering: boolean; productChanged: boolean },
): Promise<void> {
  const { clock } = deps;
  const extra = { provider_event: ev.kind };
  if (g.paidOrderId !== null) await recordOrderPaid(trx, clock, g.paidOrderId);
  if (!g.becomesActive) return;
  if (g.paidOrderId !== null) await recordSubscriptionEvent(trx, clock, 'subscription.created', g.itemId, extra);
  const previousEnd = g.found?.odi_subscription_period_end ?? null;
  const periodMovedOn = ev.periodEnd === null || previousEnd === null || ev.periodEnd.getTime() > previousEnd.getTime();
  if (g.found && g.paidOrderId === null && g.recovering) {
    await recordSubscriptionEvent(trx, clock, 'subscription.recovered', g.itemId, { ...extra, previous_status: g.found.odi_subscription_status });
  } else if (g.found && g.paidOrderId === null && ev.kind === 'renewal' && periodMovedOn) {
    await recordSubscriptionEvent(trx, clock, 'subscription.renewed', g.itemId, { ...extra, previous_period_end: previousEnd ? formatTimestamp(previousEnd) : null });
  }
  if (g.found && g.productChanged) {
    const change = await planChangeKind(trx, g.found.odi_pro_product_id, g.product.productId);
    await recordSubscriptionEvent(trx, clock, 'subscription.changed', g.itemId, { ...extra, change, previous_product_id: g.found.odi_pro_product_id });
  }
}

/** The pending events of a subscription whose purchase has arrived, applied in provider-time order. */
async function applyPending(trx: Kysely<DB>, deps: ProcessorDeps, pending: PendingEvent[], itemId: number): Promise<EventOutcome[]> {
  const outcomes: EventOutcome[] = [];
  for (const p of pending) {
    const item = (await findItemById(trx, itemId))!;
    const result: EventOutcome = isStale(p.event, item) ? { outcome: 'stale', orderItemId: itemId } : await applyToItem(trx, deps, p.event, item);
    await markPendingApplied(trx, p.webhookLogId, itemId, deps.clock.now());
    outcomes.push({ outcome: 'pending_applied', eventId: p.eventId, result });
  }
  return outcomes;
}

async function grantTier(
  trx: Kysely<DB>,
  deps: ProcessorDeps,
  ev: StoreEvent,
  g: { userId: number; product: StoreProduct; itemId: number; found: OrderItemRow | undefined; wasBearing: boolean; replaced: boolean; productChanged: boolean; now: Date; recovering: boolean },
): Promise<EventOutcome> {
  const { userId, product, itemId, found, now } = g;
  if (found?.odi_source_conflict_time != null) return { outcome: 'refused_other_source', orderItemId: itemId, activeSources: await activeSources(trx, userId, itemId) };
  if (g.replaced) return { outcome: 'not_tier_bearing', orderItemId: itemId, status: found!.odi_subscription_status };
  if (product.tierId === null) return { outcome: 'granted', orderItemId: itemId, grant: 'no_tier_link' };

  if (!g.wasBearing) {
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

  // The subscription that holds the tier now renews with a lower product (the store applied a downgrade
  // at the renewal): the member moves down with it; the upgrade-only rule is for other purchases.
  if (g.wasBearing && g.productChanged && (await movedDown(deps, ev, userId, product, itemId))) {
    await markSkipped(trx, itemId, null);
    return { outcome: 'granted', orderItemId: itemId, grant: 'moved' };
  }
  const result = await deps.membership.grantTierFromPurchase(userId, { productId: product.productId, tierId: product.tierId }, ev.source, reference(itemId), {
    event: g.recovering ? 'recovery' : ev.kind === 'renewal' ? 'renewal' : 'purchase',
  });
  if (result.outcome === 'skipped_lower_level') await markSkipped(trx, itemId, now);
  if (result.outcome === 'joined' || result.outcome === 'moved' || result.outcome === 'renewed') await markSkipped(trx, itemId, null);
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

/** Whether the subscription's new product is a lower tier than the one held; if so the member is moved down. */
async function movedDown(deps: ProcessorDeps, ev: StoreEvent, userId: number, product: StoreProduct, itemId: number): Promise<boolean> {
  try {
    await deps.membership.changeSubscribedTier(userId, { productId: product.productId, tierId: product.tierId }, ev.source, 'downgrade', reference(itemId));
    return true;
  } catch (e) {
    // Not lower than the tier held (or nothing held): the grant path decides.
    if (e instanceof TierInputError) return false;
    throw e;
  }
}

async function markSkipped(trx: Kysely<DB>, itemId: number, at: Date | null): Promise<void> {
  await trx
    .updateTable('odi_order_items')
    .set({ odi_tier_skipped_time: at })
    .where('odi_order_item_id', '=', itemId)
    .$if(at !== null, (q) => q.where('odi_tier_skipped_time', 'is', null))
    .execute();
}

/**
 * The payment a purchase or renewal reports, kept as the payment of the period it pays for (from the end
 * of the period recorded before it, else the event's time, to its period end): a prorated refund is taken
 * from it, and a refund that names only the payment finds its subscription by it.
 */
async function recordPeriodPayment(trx: Kysely<DB>, ev: StoreEvent, g: { itemId: number; found: OrderItemRow | undefined; product: StoreProduct; now: Date }): Promise<void> {
  if (ev.kind !== 'purchase' && ev.kind !== 'renewal') return;
  const amount = ev.amount ?? null;
  if (amount === null) return;
  const previousEnd = g.found?.odi_subscription_period_end ?? null;
  const from = ev.kind === 'renewal' && previousEnd && ev.periodEnd && previousEnd.getTime() < ev.periodEnd.getTime() ? previousEnd : ev.receiptTime ? g.now : ev.eventTime;
  await recordSubscriptionPayment(trx, {
    orderItemId: g.itemId,
    source: ev.source,
    kind: 'period',
    paymentReference: ev.payment?.saleId ?? ev.payment?.paymentIntentId ?? null,
    invoiceReference: ev.payment?.invoiceId ?? null,
    amount,
    currency: ev.currency ?? g.found?.odi_currency ?? g.product.currency,
    coversFrom: from,
    coversUntil: ev.periodEnd,
  });
}

/**
 * The product that renews changed at the store (App Store DOWNGRADE): recorded as the item's scheduled
 * change, shown in the summary; the tier moves when the renewal with that product arrives. A change back
 * to the current product (or none named) clears it.
 */
async function scheduleRenewalProduct(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const productId = ev.product.providerProductId ? await productForReference(trx, ev.source, ev.product.providerProductId) : null;
  const scheduled = productId !== null && productId !== item.odi_pro_product_id ? productId : null;
  await trx
    .updateTable('odi_order_items')
    .set({
      odi_scheduled_pro_product_id: scheduled,
      odi_scheduled_change_time: scheduled === null ? null : (ev.periodEnd ?? item.odi_subscription_period_end),
      ...watermark(ev),
      odi_update_time: deps.clock.now(),
    })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  return { outcome: 'renewal_product_changed', orderItemId: item.odi_order_item_id, productId: scheduled };
}

/**
 * A checkout whose payment is still on its way, or whose payment failed. Our checkout's order (named by
 * its metadata, else by the session) stays pending and grants nothing until the payment succeeds (the
 * purchase); a failure cancels it unless a later event already settled it.
 */
async function delayedPayment(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent): Promise<EventOutcome> {
  let orderId = ev.orderId ?? null;
  if (orderId === null && ev.payment?.sessionId) {
    const bySession = await trx.selectFrom('ord_orders').select('ord_order_id').where('ord_stripe_session_id', '=', ev.payment.sessionId).executeTakeFirst();
    orderId = bySession ? Number(bySession.ord_order_id) : null;
  }
  const order = orderId === null ? undefined : await trx.selectFrom('ord_orders').select(['ord_order_id', 'ord_status']).where('ord_order_id', '=', orderId).forUpdate().executeTakeFirst();
  const pending = order !== undefined && Number(order.ord_status) === ORDER_STATUS.pending;
  const now = deps.clock.now();
  if (ev.kind === 'payment_pending') {
    if (pending) {
      await trx
        .updateTable('ord_orders')
        .set({
          ...(ev.payment?.sessionId ? { ord_stripe_session_id: ev.payment.sessionId } : {}),
          ...(ev.payment?.paymentIntentId ? { ord_stripe_payment_intent_id: ev.payment.paymentIntentId } : {}),
          ...(ev.payment?.invoiceId ? { ord_stripe_invoice_id: ev.payment.invoiceId } : {}),
          ord_update_time: now,
        })
        .where('ord_order_id', '=', order.ord_order_id)
        .execute();
    }
    return { outcome: 'payment_pending', orderId: order ? Number(order.ord_order_id) : null };
  }
  if (!pending) return { outcome: 'payment_failed', orderId: order ? Number(order.ord_order_id) : null, cancelled: false };
  const settledLater = await trx
    .selectFrom('odi_order_items')
    .select('odi_order_item_id')
    .where('odi_ord_order_id', '=', order.ord_order_id)
    .where('odi_last_event_time', '>', ev.eventTime)
    .executeTakeFirst();
  if (settledLater) return { outcome: 'payment_failed', orderId: Number(order.ord_order_id), cancelled: false };
  await trx
    .updateTable('ord_orders')
    .set({ ord_status: ORDER_STATUS.failed, ord_error: 'The payment failed', ord_update_time: now })
    .where('ord_order_id', '=', order.ord_order_id)
    .execute();
  // The watermark: a success event older than this failure changes nothing.
  await trx.updateTable('odi_order_items').set({ ...watermark(ev), odi_update_time: now }).where('odi_ord_order_id', '=', order.ord_order_id).execute();
  return { outcome: 'payment_failed', orderId: Number(order.ord_order_id), cancelled: true };
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
      ...(ev.payment?.invoiceId ? { ord_stripe_invoice_id: ev.payment.invoiceId } : {}),
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
  // Undoing a cancellation makes a cancelled subscription active; one in grace stays in grace.
  const status: SubscriptionStatus = live ? (scheduled ? 'cancelled' : item.odi_subscription_status === 'cancelled' ? 'active' : item.odi_subscription_status!) : item.odi_subscription_status!;
  await trx
    .updateTable('odi_order_items')
    .set({
      odi_subscription_status: status,
      odi_subscription_cancel_at_period_end: scheduled,
      odi_subscription_cancelled_time: scheduled ? ev.eventTime : null,
      ...(ev.periodEnd ? { odi_subscription_period_end: ev.periodEnd } : {}),
      ...watermark(ev),
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  if (live && bearsTier(item) && item.odi_usr_user_id !== null && (status === 'active' || status === 'cancelled')) {
    await deps.membership.setSubscriptionStatus(item.odi_usr_user_id, status);
  }
  if (status === 'cancelled' && item.odi_subscription_status !== 'cancelled') {
    await recordSubscriptionEvent(trx, deps.clock, 'subscription.cancel_scheduled', item.odi_order_item_id, { provider_event: ev.kind });
  } else if (status === 'active' && item.odi_subscription_status === 'cancelled') {
    await recordSubscriptionEvent(trx, deps.clock, 'subscription.reactivated', item.odi_order_item_id, { provider_event: ev.kind });
  }
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
      ...watermark(ev),
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
  if (status !== item.odi_subscription_status && (status === 'refunded' || status === 'expired')) {
    const extra = status === 'refunded' ? { refund_amount: ev.amount ?? null } : { cause: ev.kind === 'cancellation' ? 'cancellation' : 'expiry' };
    await recordSubscriptionEvent(trx, deps.clock, status === 'refunded' ? 'subscription.refunded' : 'subscription.expired', item.odi_order_item_id, { provider_event: ev.kind, ...extra });
  }
  if (!bearing || item.odi_usr_user_id === null) return { outcome: 'not_tier_bearing', orderItemId: item.odi_order_item_id, status: item.odi_subscription_status };
  const reason = ev.kind === 'refund' ? 'refund' : ev.kind === 'cancellation' ? 'cancellation' : 'expiry';
  const removed = await deps.membership.removeFromAllTiers(item.odi_usr_user_id, reason, reference(item.odi_order_item_id), { source: ev.source });
  return { outcome: 'removed', orderItemId: item.odi_order_item_id, removedTierIds: removed.removedTierIds };
}


/** A refund that takes nothing away: the amount is recorded on the item and its order. */
async function recordRefund(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const now = deps.clock.now();
  const amount = ev.amount ?? null;
  await trx
    .updateTable('odi_order_items')
    .set({ odi_refund_time: ev.eventTime, odi_refund_amount: amount, ...watermark(ev), odi_update_time: now })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  await trx
    .updateTable('ord_orders')
    .set({ ord_refund_time: ev.eventTime, ord_refund_amount: amount, ord_update_time: now })
    .where('ord_order_id', '=', item.odi_ord_order_id)
    .execute();
  return { outcome: 'refund_recorded', orderItemId: item.odi_order_item_id, amount };
}

/** What a status change row says of the event that made it. */
const describe = (ev: StoreEvent) => ({ source: ev.source, event: ev.kind, event_time: ev.eventTime.toISOString() });

/**
 * A renewal payment failed and the provider retries (DESIGN 14): the subscription is in_grace and keeps
 * its tier until grace_until. Only an active subscription (or one already in grace) enters it. A web
 * source's grace counts from its first failure (later retries keep it); a store states its own.
 */
async function enterGrace(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const from = item.odi_subscription_status;
  if (from !== 'active' && from !== 'in_grace') return { outcome: 'unchanged', orderItemId: item.odi_order_item_id, status: from };
  const now = deps.clock.now();
  const webSource = ev.source === 'card_processor' || ev.source === 'wallet_provider';
  const graceUntil = from === 'in_grace' && webSource && item.odi_subscription_grace_until !== null ? item.odi_subscription_grace_until : (ev.graceUntil ?? null);
  await trx
    .updateTable('odi_order_items')
    .set({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: graceUntil, ...watermark(ev), odi_update_time: now })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  if (from !== 'in_grace') {
    await recordSubscriptionStatusChange(trx, {
      orderItemId: item.odi_order_item_id,
      userId: item.odi_usr_user_id,
      oldStatus: from,
      newStatus: 'in_grace',
      reason: 'in_grace',
      at: now,
      metadata: { ...describe(ev), grace_until: graceUntil?.toISOString() ?? null },
    });
    await recordSubscriptionEvent(trx, deps.clock, 'subscription.billing_issue', item.odi_order_item_id, {
      provider_event: ev.kind,
      previous_status: from,
      grace_until: graceUntil ? formatTimestamp(graceUntil) : null,
    });
  }
  return { outcome: 'status_changed', orderItemId: item.odi_order_item_id, status: 'in_grace' };
}

/**
 * The provider holds the account (on_hold) or paused the subscription (DESIGN 14): access is removed
 * through the one removal path when the subscription held the tier. A cancelled subscription (the
 * member's own end-of-period cancel, which the wallet provider carries out as a suspension) and an
 * ended one are left as they are.
 */
async function suspend(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow, to: 'on_hold' | 'paused'): Promise<EventOutcome> {
  const from = item.odi_subscription_status;
  if (from === null || !['active', 'in_grace', 'on_hold', 'paused'].includes(from)) return { outcome: 'unchanged', orderItemId: item.odi_order_item_id, status: from };
  const now = deps.clock.now();
  await trx
    .updateTable('odi_order_items')
    .set({
      odi_subscription_status: to,
      odi_subscription_grace_until: null,
      odi_subscription_resume_time: to === 'paused' ? (ev.resumeTime ?? null) : null,
      ...watermark(ev),
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', item.odi_order_item_id)
    .execute();
  if (from !== to) {
    await recordSubscriptionStatusChange(trx, {
      orderItemId: item.odi_order_item_id,
      userId: item.odi_usr_user_id,
      oldStatus: from,
      newStatus: to,
      reason: to,
      at: now,
      metadata: { ...describe(ev), ...(to === 'paused' ? { resume_time: ev.resumeTime?.toISOString() ?? null } : {}) },
    });
    await recordSubscriptionEvent(trx, deps.clock, to === 'paused' ? 'subscription.paused' : 'subscription.on_hold', item.odi_order_item_id, {
      provider_event: ev.kind,
      previous_status: from,
      ...(to === 'paused' ? { resume_time: ev.resumeTime ? formatTimestamp(ev.resumeTime) : null } : {}),
    });
  }
  const bearing = bearsTier(item) && (from === 'active' || from === 'in_grace');
  if (!bearing || item.odi_usr_user_id === null) return { outcome: 'status_changed', orderItemId: item.odi_order_item_id, status: to };
  const removed = await deps.membership.removeFromAllTiers(item.odi_usr_user_id, to, reference(item.odi_order_item_id), { source: ev.source });
  return { outcome: 'removed', orderItemId: item.odi_order_item_id, removedTierIds: removed.removedTierIds };
}

/**
 * The provider says the subscription is active again: from a billing issue or a pause it recovers
 * through the one grant path; a cancelled one has its cancellation undone; anything else is unchanged.
 */
async function recover(trx: Kysely<DB>, deps: ProcessorDeps, ev: StoreEvent, item: OrderItemRow): Promise<EventOutcome> {
  const from = item.odi_subscription_status;
  if (from !== null && RECOVERABLE_STATUSES.includes(from)) return (await grant(trx, deps, ev, item))[0]!;
  if (from === 'cancelled') return setCancellation(trx, deps, { ...ev, kind: 'cancellation_undone' }, item);
  return { outcome: 'unchanged', orderItemId: item.odi_order_item_id, status: from };
}
