import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Settings } from '../../settings/store.js';
import { TierMembershipService } from '../../tiers/membership.js';
import { recordSubscriptionEvent } from '../outbound-events.js';
import { addRefunded, periodPayments, recordSubscriptionPayment, setPaymentReference } from '../payments.js';
import { atProvider, paymentReferenceOf, planBilling, providerFailure, subscriptionRef, type PlanBilling, type WebBilledSource } from './billing.js';
import { refundsAcross } from './proration.js';
import { isStoreBilled, refuse, requireStoreActive, storeBilledRefusal } from './refusals.js';
import { lockedSubscription, type Subscription } from './subscriptions.js';
import { lifecycleDb } from './tables.js';

/** What a lifecycle request works with: the request's transaction, the settings, the clock, the member. */
export interface LifecycleContext {
  db: Kysely<DB>;
  settings: Settings;
  clock: Clock;
  userId: number;
}

export interface CancelOutcome {
  order_item_id: number;
  /**
   * cancelled (access to the period end) or, for an immediate cancellation, expired or refunded; active
   * when the refund was made but the provider then would not cancel (cancelled false).
   */
  status: 'cancelled' | 'expired' | 'refunded' | 'active';
  timing: 'immediate' | 'end_of_period';
  /** When access ends (now for an immediate cancellation); null while the subscription goes on. */
  end_date: string | null;
  /** Minor units refunded; null when no refund applies (end of period, or proration off). */
  refund_amount: number | null;
  /** The currency of refund_amount (the subscription's). */
  currency: string;
  /** Whether the subscription was cancelled at the provider and here. */
  cancelled: boolean;
}

const orderItemRef = (id: number) => ({ type: 'order_item', id });

/** A web-billed, still-paying subscription of the member, or the refusal that says why not. */
async function ownedSubscription(ctx: LifecycleContext, orderItemId: number, what: string): Promise<Subscription & { source: WebBilledSource }> {
  const sub = await lockedSubscription(ctx.db, ctx.userId, orderItemId);
  if (!sub) throw refuse('no_subscription', `You have no subscription ${orderItemId} to ${what}.`);
  if (isStoreBilled(sub.source)) throw storeBilledRefusal(sub.source, what === 'cancel' ? 'cancelled' : 'reactivated');
  if (sub.source === null) throw refuse('not_cancellable', 'This purchase is not a subscription billed here.');
  return sub as Subscription & { source: WebBilledSource };
}

async function providerRef(ctx: LifecycleContext, sub: { orderItemId: number; source: WebBilledSource }): Promise<string> {
  const ref = await subscriptionRef(ctx.db, sub.orderItemId);
  if (!ref) throw providerFailure(sub.source, new Error('no provider subscription reference on record'));
  return ref;
}

/**
 * Cancel (orders_recurring_action): with subscription_cancellation_timing 'immediate' the subscription
 * ends now at the provider, the unused part is refunded when subscription_cancellation_prorate is on,
 * and the removal path runs; with 'end_of_period' renewal stops and access lasts to the period end
 * (the period-end task then runs the removal path).
 */
export async function cancelSubscription(ctx: LifecycleContext, orderItemId: number): Promise<CancelOutcome> {
  requireStoreActive(ctx.settings);
  if (!ctx.settings.bool('subscription_cancellation_enabled')) throw refuse('cancellation_disabled', 'Cancelling a subscription is not available on this site.');
  const sub = await ownedSubscription(ctx, orderItemId, 'cancel');
  if (sub.status === 'cancelled') throw refuse('already_cancelled', 'This subscription is already cancelled.');
  if (sub.status !== 'active') throw refuse('expired', 'This subscription has already ended.');

  const now = ctx.clock.now();
  const billing = planBilling(sub.source, ctx.db, ctx.settings, ctx.clock);
  const ref = await providerRef(ctx, sub);
  const db = lifecycleDb(ctx.db);

  if (ctx.settings.string('subscription_cancellation_timing') === 'end_of_period') {
    await atProvider(sub.source, () => billing.scheduleCancel(ref));
    await db
      .updateTable('odi_order_items')
      .set({
        odi_subscription_status: 'cancelled',
        odi_subscription_cancel_at_period_end: true,
        odi_subscription_cancelled_time: now,
        // A scheduled downgrade is kept (the provider already bills the lower plan): it applies again if
        // the member reactivates, and lapses with the subscription otherwise.
        odi_update_time: now,
      })
      .where('odi_order_item_id', '=', sub.orderItemId)
      .execute();
    await new TierMembershipService(ctx.db, ctx.clock).setSubscriptionStatus(ctx.userId, 'cancelled');
    await recordSubscriptionEvent(ctx.db, ctx.clock, 'subscription.cancel_scheduled', sub.orderItemId, { by: 'member' });
    return {
      order_item_id: sub.orderItemId,
      status: 'cancelled',
      timing: 'end_of_period',
      end_date: sub.periodEnd ? formatTimestamp(sub.periodEnd) : null,
      refund_amount: null,
      currency: sub.currency,
      cancelled: true,
    };
  }

  // The refund first, then the cancel (DESIGN 14): a refusal of the refund cancels nothing anywhere (the
  // 502 rolls our side back); a cancel that fails after a refund keeps the refund on record and says so.
  const prorate = ctx.settings.bool('subscription_cancellation_prorate');
  const refunds = prorate ? await refundUnused(ctx, sub, billing, ref, now) : null;
  const refund = refunds?.refunded ?? null;
  const notCancelled = async (what: string): Promise<CancelOutcome> => {
    await recordRefund(ctx, sub.orderItemId, refund!, now, `Prorated refund of ${what}${what ? ' ' : ''}the unused period; the subscription could not be cancelled at the provider`);
    return { order_item_id: sub.orderItemId, status: 'active', timing: 'immediate', end_date: null, refund_amount: refund, currency: sub.currency, cancelled: false };
  };
  if (refunds && !refunds.complete) return notCancelled('part of');
  try {
    await billing.cancelNow(ref);
  } catch (e) {
    if (!refund) throw providerFailure(sub.source, e);
    return notCancelled('');
  }
  const status = refund !== null && refund > 0 ? 'refunded' : 'expired';
  await db
    .updateTable('odi_order_items')
    .set({
      odi_subscription_status: status,
      odi_subscription_cancel_at_period_end: false,
      odi_subscription_cancelled_time: now,
      odi_scheduled_pro_product_id: null,
      odi_scheduled_change_time: null,
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', sub.orderItemId)
    .execute();
  if (refund !== null) await recordRefund(ctx, sub.orderItemId, refund, now, 'Prorated refund of the unused period on cancellation');
  await recordSubscriptionEvent(ctx.db, ctx.clock, status === 'refunded' ? 'subscription.refunded' : 'subscription.expired', sub.orderItemId, {
    by: 'member',
    ...(status === 'refunded' ? { refund_amount: refund } : { cause: 'cancellation' }),
  });
  // A second source's purchase (flagged by the store), or one whose grant the upgrade-only rule skipped,
  // never held the tier, so it takes none away.
  if (sub.tier && !sub.sourceConflict && !sub.tierSkipped) await new TierMembershipService(ctx.db, ctx.clock).removeFromAllTiers(ctx.userId, 'cancellation', orderItemRef(sub.orderItemId), { source: sub.source });
  return { order_item_id: sub.orderItemId, status, timing: 'immediate', end_date: formatTimestamp(now), refund_amount: refund, currency: sub.currency, cancelled: true };
}

/** The refund (minor units) is recorded on the item: what was refunded of it in all, when, and why. */
async function recordRefund(ctx: LifecycleContext, orderItemId: number, amount: number, now: Date, note: string): Promise<void> {
  await lifecycleDb(ctx.db)
    .updateTable('odi_order_items')
    .set((eb) => ({ odi_refund_amount: eb(eb.fn.coalesce('odi_refund_amount', eb.val(0)), '+', amount), odi_refund_time: now, odi_refund_note: note }))
    .where('odi_order_item_id', '=', orderItemId)
    .execute();
}

/**
 * Refunds the unused share of what was actually paid for the current period, spread over the payments
 * that paid for it (the period's own and any upgrade's charge), each never more than is left of it, in
 * integer minor units; each refund is counted on its payment as it is made, so a retry never repeats it.
 * Returns the total refunded. A provider refusal before anything was refunded is the 502 that changes
 * nothing; after a refund was made, the refunds made so far stand (the cancel is not attempted).
 */
async function refundUnused(
  ctx: LifecycleContext,
  sub: Subscription & { source: WebBilledSource },
  billing: PlanBilling,
  ref: string,
  now: Date,
): Promise<{ refunded: number; complete: boolean }> {
  if (sub.periodEnd === null || sub.periodEnd.getTime() <= now.getTime()) return { refunded: 0, complete: true };
  const start = currentPeriodStart(sub, sub.periodEnd);
  let payments = await periodPayments(ctx.db, sub.orderItemId, start);
  if (!payments.some((p) => p.kind === 'period') && sub.price !== null && start.getTime() < sub.periodEnd.getTime()) {
    // Nothing recorded for the period: it was paid the item's price, by the payment found at refund time.
    await recordSubscriptionPayment(ctx.db, {
      orderItemId: sub.orderItemId,
      source: sub.source,
      kind: 'period',
      amount: sub.price,
      currency: sub.currency,
      coversFrom: start,
      coversUntil: sub.periodEnd,
    });
    payments = await periodPayments(ctx.db, sub.orderItemId, start);
  }
  const amounts = refundsAcross(payments, sub.periodEnd, now);
  let refunded = 0;
  for (const [i, p] of payments.entries()) {
    const amount = amounts[i]!;
    if (amount <= 0) continue;
    try {
      const payment = p.paymentReference ? billing.paymentRef(p.paymentReference) : await billing.paymentFor(sub.orderItemId, ref, p.invoiceReference);
      if (!p.paymentReference) {
        const found = paymentReferenceOf(payment);
        if (found) await setPaymentReference(ctx.db, p.id, found);
      }
      await billing.refund(sub.orderItemId, payment, amount, p.currency);
    } catch (e) {
      if (refunded === 0) throw providerFailure(sub.source, e);
      // Part refunded: nothing more is asked of the provider; the member is told what was refunded.
      return { refunded, complete: false };
    }
    await addRefunded(ctx.db, p.id, amount);
    refunded += amount;
  }
  return { refunded, complete: true };
}

/**
 * Where the current paid period began. Renewals move the period end on but not the recorded start, so
 * with a known billing period the start is one period before the end (never before the recorded start);
 * otherwise the recorded start, else the purchase time.
 */
export function currentPeriodStart(sub: Pick<Subscription, 'period' | 'periodStart' | 'createTime'>, periodEnd: Date): Date {
  const recorded = sub.periodStart ?? sub.createTime;
  if (!sub.period) return recorded;
  const oneBack = periodBefore(periodEnd, sub.period);
  return oneBack.getTime() > recorded.getTime() ? oneBack : recorded;
}

/** The same instant one billing period earlier; a month back from the 31st lands on the month's last day. */
export function periodBefore(end: Date, period: NonNullable<Subscription['period']>): Date {
  if (period === 'day') return new Date(end.getTime() - 86_400_000);
  if (period === 'week') return new Date(end.getTime() - 7 * 86_400_000);
  const months = period === 'month' ? 1 : 12;
  const y = end.getUTCFullYear();
  const m = end.getUTCMonth() - months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const d = new Date(end.getTime());
  d.setUTCFullYear(y, m, Math.min(end.getUTCDate(), lastDay));
  return d;
}

export interface ReactivateOutcome {
  order_item_id: number;
  status: 'active';
  renewal_date: string | null;
}

/** Reactivate a cancelled subscription before its paid period has ended. */
export async function reactivateSubscription(ctx: LifecycleContext, orderItemId: number): Promise<ReactivateOutcome> {
  requireStoreActive(ctx.settings);
  if (!ctx.settings.bool('subscription_reactivation_enabled')) throw refuse('reactivation_disabled', 'Reactivating a cancelled subscription is not available on this site.');
  const sub = await ownedSubscription(ctx, orderItemId, 'reactivate');
  if (sub.status === 'active') throw refuse('not_cancelled', 'This subscription is not cancelled, so there is nothing to reactivate.');
  const now = ctx.clock.now();
  if (sub.status !== 'cancelled' || sub.periodEnd === null || sub.periodEnd.getTime() <= now.getTime()) {
    throw refuse('expired', 'This subscription has expired and cannot be reactivated; please subscribe again.');
  }
  const billing = planBilling(sub.source, ctx.db, ctx.settings, ctx.clock);
  const ref = await providerRef(ctx, sub);
  await atProvider(sub.source, () => billing.undoScheduledCancel(ref));
  await lifecycleDb(ctx.db)
    .updateTable('odi_order_items')
    .set({ odi_subscription_status: 'active', odi_subscription_cancel_at_period_end: false, odi_subscription_cancelled_time: null, odi_update_time: now })
    .where('odi_order_item_id', '=', sub.orderItemId)
    .execute();
  await new TierMembershipService(ctx.db, ctx.clock).setSubscriptionStatus(ctx.userId, 'active');
  await recordSubscriptionEvent(ctx.db, ctx.clock, 'subscription.reactivated', sub.orderItemId, { by: 'member' });
  return { order_item_id: sub.orderItemId, status: 'active', renewal_date: formatTimestamp(sub.periodEnd) };
}
