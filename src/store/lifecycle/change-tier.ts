import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import { TierInputError } from '../../tiers/errors.js';
import { TierMembershipService } from '../../tiers/membership.js';
import { recordSubscriptionEvent } from '../outbound-events.js';
import { periodPayments, recordSubscriptionPayment } from '../payments.js';
import { atProvider, paymentReferenceOf, planBilling, providerFailure, subscriptionRef, type PlanBilling, type WebBilledSource } from './billing.js';
import { currentPeriodStart, type LifecycleContext } from './cancel.js';
import { isStoreBilled, refuse, requireStoreActive, storeBilledRefusal } from './refusals.js';
import { lockedCurrentSubscription, readPlanProduct, type PlanProduct, type Subscription } from './subscriptions.js';
import { lifecycleDb } from './tables.js';

export type TierChangeKind = 'upgrade' | 'downgrade' | 'downgrade_scheduled' | 'scheduled_downgrade_cancelled';

export interface TierChangeOutcome {
  order_item_id: number;
  change: TierChangeKind;
  /** The tier the subscription is for after the change (for a scheduled downgrade: the tier it will move to). */
  tier: { name: string; display_name: string; tier_level: number };
  /** When the change takes (took) effect. */
  effective_date: string;
  /** A wallet plan change the payer must approve at the provider; null otherwise. */
  approval_url: string | null;
}

/** Which plan to move to: a product, or a tier (its product sold through the same source). */
export type TierChangeTarget = { productId: number } | { tierId: number };

type WebSubscription = Subscription & { source: WebBilledSource; tier: NonNullable<Subscription['tier']> };
type TierPlan = PlanProduct & { tier: NonNullable<PlanProduct['tier']> };

const orderItemRef = (id: number) => ({ type: 'order_item', id });

/** The active products of a tier, preferring the one with the member's current billing period. */
async function productForTier(db: Kysely<DB>, tierId: number, period: string | null): Promise<number | null> {
  const rows = await db
    .selectFrom('pro_products')
    .select(['pro_product_id'])
    .where('pro_sbt_subscription_tier_id', '=', tierId)
    .where('pro_is_active', '=', true)
    .where('pro_delete_time', 'is', null)
    .orderBy('pro_product_id')
    .execute();
  const products = await Promise.all(rows.map((r) => readPlanProduct(db, Number(r.pro_product_id))));
  const live = products.filter((p): p is PlanProduct => p !== null && p.active);
  return (live.find((p) => p.period === period) ?? live[0])?.productId ?? null;
}

async function targetPlan(ctx: LifecycleContext, target: TierChangeTarget, current: Subscription): Promise<TierPlan> {
  const productId = 'productId' in target ? target.productId : await productForTier(ctx.db, target.tierId, current.period);
  const plan = productId === null ? null : await readPlanProduct(ctx.db, productId);
  if (!plan || !plan.active) throw refuse('product_unavailable', 'That plan is not available.');
  if (!plan.tier) throw refuse('not_a_tier_product', `${plan.name} is not a subscription tier plan.`);
  if (!plan.tier.live) throw refuse('product_unavailable', `The ${plan.tier.displayName} tier is not available.`);
  return plan as TierPlan;
}

async function currentWebSubscription(ctx: LifecycleContext): Promise<WebSubscription> {
  const sub = await lockedCurrentSubscription(ctx.db, ctx.userId);
  if (!sub) throw refuse('no_subscription', 'You have no subscription to change. Choose a plan in the store to subscribe.');
  if (isStoreBilled(sub.source)) throw storeBilledRefusal(sub.source, 'changed');
  if (sub.source === null || !sub.tier || sub.sourceConflict) throw refuse('not_a_tier_product', 'Your subscription is not for a tier, so its tier cannot be changed.');
  if (sub.status === 'cancelled') throw refuse('already_cancelled', 'Your subscription is cancelled. Reactivate it before changing its tier.');
  return sub as WebSubscription;
}

async function planRefAt(billing: PlanBilling, plan: { productId: number; name: string }): Promise<string> {
  const ref = await billing.planRef(plan.productId);
  const where = billing.source === 'card_processor' ? 'by card' : 'through the wallet provider';
  if (!ref) throw refuse('product_unavailable', `${plan.name} is not sold ${where}, so your subscription cannot move to it.`);
  return ref;
}

const tierOf = (p: TierPlan | WebSubscription) => ({ name: p.tier.name, display_name: p.tier.displayName, tier_level: p.tier.level });

/**
 * change_tier: an upgrade is always available and bought now with prorated billing; a downgrade needs
 * subscription_downgrades_enabled and takes effect now or at the period end per
 * subscription_downgrade_timing. A downgrade scheduled for the period end is undone by asking for the
 * current tier again, replaced by asking for another lower tier, and dropped by an upgrade.
 */
export async function changeTier(ctx: LifecycleContext, target: TierChangeTarget): Promise<TierChangeOutcome> {
  requireStoreActive(ctx.settings);
  const sub = await currentWebSubscription(ctx);
  const plan = await targetPlan(ctx, target, sub);
  const billing = planBilling(sub.source, ctx.db, ctx.settings, ctx.clock);
  const ref = await subscriptionRef(ctx.db, sub.orderItemId);
  if (!ref) throw providerFailure(sub.source, new Error('no provider subscription reference on record'));
  const now = ctx.clock.now();
  const db = lifecycleDb(ctx.db);

  if (plan.tier.tierId === sub.tier.tierId) {
    if (sub.scheduledProductId === null) throw refuse('same_tier', `You are already subscribed to the ${sub.tier.displayName} tier.`);
    // Back to the plan the member holds: the provider bills it again from the next period.
    const currentRef = await planRefAt(billing, { productId: sub.productId, name: sub.productName });
    const { approvalUrl } = await atProvider(sub.source, () => billing.changePlan(ref, { planRef: currentRef, productId: sub.productId }, { prorate: false }));
    await db
      .updateTable('odi_order_items')
      .set({ odi_scheduled_pro_product_id: null, odi_scheduled_change_time: null, odi_update_time: now })
      .where('odi_order_item_id', '=', sub.orderItemId)
      .execute();
    return { order_item_id: sub.orderItemId, change: 'scheduled_downgrade_cancelled', tier: tierOf(sub), effective_date: formatTimestamp(now), approval_url: approvalUrl };
  }
  if (plan.tier.level === sub.tier.level) {
    throw refuse('same_tier', `The ${plan.tier.displayName} tier is at the same level as your ${sub.tier.displayName} tier.`);
  }

  const upgrade = plan.tier.level > sub.tier.level;
  if (!upgrade && !ctx.settings.bool('subscription_downgrades_enabled')) {
    throw refuse('downgrades_disabled', 'Moving to a lower tier is not available on this site.');
  }
  const planRef = await planRefAt(billing, plan);
  const later = !upgrade && ctx.settings.string('subscription_downgrade_timing') === 'end_of_period' && sub.periodEnd !== null && sub.periodEnd > now;

  if (later) {
    // The provider bills the lower plan from the next period on; the tier moves at the period end.
    const { approvalUrl } = await atProvider(sub.source, () => billing.changePlan(ref, { planRef, productId: plan.productId }, { prorate: false }));
    await db
      .updateTable('odi_order_items')
      .set({ odi_scheduled_pro_product_id: plan.productId, odi_scheduled_change_time: sub.periodEnd, odi_update_time: now })
      .where('odi_order_item_id', '=', sub.orderItemId)
      .execute();
    return {
      order_item_id: sub.orderItemId,
      change: 'downgrade_scheduled',
      tier: tierOf(plan),
      effective_date: formatTimestamp(sub.periodEnd!),
      approval_url: approvalUrl,
    };
  }

  // Our side first: a refusal from the tier services must come before the provider has been asked.
  // The period's own payment is kept before the change, while it is still the subscription's latest: a
  // prorated refund later is taken from it and from the upgrade's charge (DESIGN 14).
  const periodStart = currentPeriodStart(sub, sub.periodEnd ?? now);
  if (upgrade) await keepPeriodPayment(ctx, sub, billing, ref, periodStart);
  await switchPlan(ctx.db, sub.orderItemId, plan, now);
  await moveTier(ctx, sub, plan, upgrade ? 'upgrade' : 'downgrade');
  await recordSubscriptionEvent(ctx.db, ctx.clock, 'subscription.changed', sub.orderItemId, { by: 'member', change: upgrade ? 'upgrade' : 'downgrade', previous_product_id: sub.productId });
  // An upgrade is bought now: the prorated difference is charged at once, and that payment recorded.
  const { approvalUrl, charged } = await atProvider(sub.source, () =>
    billing.changePlan(ref, { planRef, productId: plan.productId }, { prorate: true, chargeNow: upgrade }),
  );
  if (charged && charged.amount > 0) {
    await recordSubscriptionPayment(ctx.db, {
      orderItemId: sub.orderItemId,
      source: sub.source,
      kind: 'upgrade',
      paymentReference: charged.reference,
      invoiceReference: charged.invoiceId,
      amount: charged.amount,
      currency: charged.currency ?? sub.currency,
      coversFrom: now,
      coversUntil: sub.periodEnd,
    });
  }
  return { order_item_id: sub.orderItemId, change: upgrade ? 'upgrade' : 'downgrade', tier: tierOf(plan), effective_date: formatTimestamp(now), approval_url: approvalUrl };
}

/**
 * Records the payment that paid for the current period when none is recorded yet (a subscription bought
 * before payments were kept, or whose renewal named none): what the item's price was, and the payment a
 * refund of it goes to, found now while it is still the subscription's latest. A provider that cannot
 * name it leaves the reference to be found at refund time.
 */
async function keepPeriodPayment(ctx: LifecycleContext, sub: WebSubscription, billing: PlanBilling, ref: string, periodStart: Date): Promise<void> {
  if (sub.price === null) return;
  const recorded = await periodPayments(ctx.db, sub.orderItemId, periodStart);
  if (recorded.some((p) => p.kind === 'period')) return;
  let reference: string | null = null;
  try {
    reference = paymentReferenceOf(await billing.paymentFor(sub.orderItemId, ref));
  } catch {
    reference = null;
  }
  await recordSubscriptionPayment(ctx.db, {
    orderItemId: sub.orderItemId,
    source: sub.source,
    kind: 'period',
    paymentReference: reference,
    amount: sub.price,
    currency: sub.currency,
    coversFrom: periodStart,
    coversUntil: sub.periodEnd,
  });
}

/** The order item now stands for the new plan: its product and price; any scheduled change is settled. */
export async function switchPlan(db: Kysely<DB>, orderItemId: number, plan: PlanProduct, now: Date): Promise<void> {
  await lifecycleDb(db)
    .updateTable('odi_order_items')
    .set({
      odi_pro_product_id: plan.productId,
      ...(plan.price !== null ? { odi_price: plan.price } : {}),
      odi_scheduled_pro_product_id: null,
      odi_scheduled_change_time: null,
      odi_update_time: now,
    })
    .where('odi_order_item_id', '=', orderItemId)
    .execute();
}

/** The tier services move the member, with change tracking; a conflict with the recorded tier is a refusal. */
export async function moveTier(
  ctx: Pick<LifecycleContext, 'db' | 'clock' | 'userId'>,
  sub: { orderItemId: number; source: WebBilledSource },
  plan: TierPlan,
  direction: 'upgrade' | 'downgrade',
): Promise<void> {
  try {
    await new TierMembershipService(ctx.db, ctx.clock).changeSubscribedTier(
      ctx.userId,
      { productId: plan.productId, tierId: plan.tier.tierId },
      sub.source,
      direction,
      orderItemRef(sub.orderItemId),
    );
  } catch (e) {
    if (e instanceof TierInputError) throw refuse('tier_conflict', `Your current tier does not allow this ${direction}: ${e.message}.`);
    throw e;
  }
}
