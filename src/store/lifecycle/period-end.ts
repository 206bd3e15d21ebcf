import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Settings } from '../../settings/store.js';
import { TierInputError } from '../../tiers/errors.js';
import { recordSubscriptionStatusChange } from '../../tiers/change-tracking.js';
import { TierMembershipService, type BillingSource } from '../../tiers/membership.js';
import { recordSubscriptionEvent } from '../outbound-events.js';
import { planBilling, subscriptionRef, type WebBilledSource } from './billing.js';
import { switchPlan } from './change-tier.js';
import { readPlanProduct } from './subscriptions.js';
import { lifecycleDb } from './tables.js';

export interface PeriodEndResult {
  /** Cancelled subscriptions whose paid period ended: expired, tier removed. */
  expired: number;
  /** Scheduled downgrades applied. */
  downgraded: number;
  /** Scheduled downgrades dropped because their plan or tier is no longer available or no longer lower. */
  downgrades_dropped: number;
  /** Provider calls that failed after the local change (wallet cancellations at the period end). */
  provider_errors: number;
  /** Subscriptions whose grace period ended while the payment was still failing: on hold, tier removed. */
  grace_ended: number;
}

/** Items handled per run; the next run takes the rest. */
const BATCH = 200;
const orderItemRef = (id: number) => ({ type: 'order_item', id });

/**
 * Applies what falls due at the end of paid periods and grace periods, each item in its own transaction under a row lock
 * with its condition checked again, so that every change happens exactly once however many runs (or
 * nodes, or concurrent member requests) reach it, and never before its time.
 */
export async function processPeriodEnds(db: Kysely<DB>, clock: Clock, settings: Settings): Promise<PeriodEndResult> {
  const result: PeriodEndResult = { expired: 0, downgraded: 0, downgrades_dropped: 0, provider_errors: 0, grace_ended: 0 };
  const now = clock.now();
  const ldb = lifecycleDb(db);

  const dueCancelled = await ldb
    .selectFrom('odi_order_items')
    .select('odi_order_item_id')
    .where('odi_subscription_status', '=', 'cancelled')
    .where('odi_subscription_period_end', '<=', now)
    .orderBy('odi_subscription_period_end')
    .limit(BATCH)
    .execute();
  for (const { odi_order_item_id: id } of dueCancelled) {
    const ended = await db.transaction().execute((trx) => expireCancelled(trx, clock, Number(id)));
    if (!ended) continue;
    result.expired++;
    if (ended.source === 'wallet_provider' && ended.ref) {
      // Billing was suspended when the member cancelled; the subscription now ends at the provider too.
      try {
        await planBilling(ended.source, db, settings, clock).finishScheduledCancel(ended.ref);
      } catch {
        result.provider_errors++;
      }
    }
  }

  const dueGrace = await ldb
    .selectFrom('odi_order_items')
    .select('odi_order_item_id')
    .where('odi_subscription_status', '=', 'in_grace')
    .where('odi_subscription_grace_until', '<=', now)
    .orderBy('odi_subscription_grace_until')
    .limit(BATCH)
    .execute();
  for (const { odi_order_item_id: id } of dueGrace) {
    if (await db.transaction().execute((trx) => endGrace(trx, clock, Number(id)))) result.grace_ended++;
  }

  const dueDowngrades = await ldb
    .selectFrom('odi_order_items')
    .select('odi_order_item_id')
    .where('odi_subscription_status', '=', 'active')
    .where('odi_scheduled_pro_product_id', 'is not', null)
    .where('odi_scheduled_change_time', '<=', now)
    // A store-billed downgrade (App Store DOWNGRADE) takes effect with the store's renewal, not on our clock.
    .where('odi_payment_source', 'in', ['card_processor', 'wallet_provider'])
    .orderBy('odi_scheduled_change_time')
    .limit(BATCH)
    .execute();
  for (const { odi_order_item_id: id } of dueDowngrades) {
    const outcome = await db.transaction().execute((trx) => applyScheduledDowngrade(trx, clock, Number(id)));
    if (outcome === 'applied') result.downgraded++;
    if (outcome === 'dropped') result.downgrades_dropped++;
  }
  return result;
}

async function expireCancelled(trx: Kysely<DB>, clock: Clock, id: number): Promise<{ source: WebBilledSource | null; ref: string | null } | null> {
  const now = clock.now();
  const item = await lifecycleDb(trx)
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select(['odi_usr_user_id', 'odi_payment_source', 'odi_source_conflict_time', 'odi_tier_skipped_time', 'pro_sbt_subscription_tier_id'])
    .where('odi_order_item_id', '=', id)
    .where('odi_subscription_status', '=', 'cancelled')
    .where('odi_subscription_period_end', '<=', now)
    .forUpdate('odi_order_items')
    .executeTakeFirst();
  if (!item) return null;
  await lifecycleDb(trx)
    .updateTable('odi_order_items')
    .set({ odi_subscription_status: 'expired', odi_update_time: now })
    .where('odi_order_item_id', '=', id)
    .execute();
  await recordSubscriptionEvent(trx, clock, 'subscription.expired', id, { cause: 'expiry' });
  await removeTierHeldBy(trx, clock, id, item, 'expiry');
  const source = item.odi_payment_source === 'card_processor' || item.odi_payment_source === 'wallet_provider' ? item.odi_payment_source : null;
  return { source, ref: await subscriptionRef(trx, id) };
}

/**
 * A grace period over while the renewal payment still fails (DESIGN 14): the subscription goes on hold
 * and the tier it held is removed through the one removal path. A recovery (a renewal, or the
 * provider's word) before this moment took it out of grace, so the condition is checked again under the lock.
 */
async function endGrace(trx: Kysely<DB>, clock: Clock, id: number): Promise<boolean> {
  const now = clock.now();
  const item = await lifecycleDb(trx)
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select(['odi_usr_user_id', 'odi_payment_source', 'odi_source_conflict_time', 'odi_tier_skipped_time', 'odi_subscription_grace_until', 'pro_sbt_subscription_tier_id'])
    .where('odi_order_item_id', '=', id)
    .where('odi_subscription_status', '=', 'in_grace')
    .where('odi_subscription_grace_until', '<=', now)
    .forUpdate('odi_order_items')
    .executeTakeFirst();
  if (!item) return false;
  await lifecycleDb(trx)
    .updateTable('odi_order_items')
    .set({ odi_subscription_status: 'on_hold', odi_subscription_grace_until: null, odi_update_time: now })
    .where('odi_order_item_id', '=', id)
    .execute();
  const userId = item.odi_usr_user_id === null ? null : Number(item.odi_usr_user_id);
  await recordSubscriptionStatusChange(trx, {
    orderItemId: id,
    userId,
    oldStatus: 'in_grace',
    newStatus: 'on_hold',
    reason: 'on_hold',
    at: now,
    metadata: { source: item.odi_payment_source, event: 'grace_expired', grace_until: item.odi_subscription_grace_until?.toISOString() ?? null },
  });
  await recordSubscriptionEvent(trx, clock, 'subscription.on_hold', id, {
    previous_status: 'in_grace',
    grace_until: item.odi_subscription_grace_until ? formatTimestamp(item.odi_subscription_grace_until) : null,
  });
  await removeTierHeldBy(trx, clock, id, item, 'on_hold');
  return true;
}

/**
 * The one removal path for a subscription that ends or goes on hold here: only the tier it held, and
 * only while no other subscription of the user still pays for one. A second source's purchase (flagged
 * by the store) never held the tier, nor did a purchase whose grant the upgrade-only rule skipped
 * (DESIGN 14), so their end takes none away.
 */
async function removeTierHeldBy(
  trx: Kysely<DB>,
  clock: Clock,
  id: number,
  item: { odi_usr_user_id: number | null; odi_payment_source: BillingSource | null; odi_source_conflict_time: Date | null; odi_tier_skipped_time: Date | null; pro_sbt_subscription_tier_id: number | null },
  reason: 'expiry' | 'on_hold',
): Promise<void> {
  const userId = item.odi_usr_user_id === null ? null : Number(item.odi_usr_user_id);
  const heldTier = item.pro_sbt_subscription_tier_id !== null && item.odi_source_conflict_time === null && item.odi_tier_skipped_time === null;
  if (userId === null || !heldTier || (await holdsAnotherTierSubscription(trx, userId, id, clock.now()))) return;
  await new TierMembershipService(trx, clock).removeFromAllTiers(userId, reason, orderItemRef(id), item.odi_payment_source ? { source: item.odi_payment_source } : {});
}

/**
 * Whether another of the user's subscriptions still pays for a tier (bought again before this one ran
 * out, say): then this expiry must not take the tier away.
 */
async function holdsAnotherTierSubscription(trx: Kysely<DB>, userId: number, exceptId: number, now: Date): Promise<boolean> {
  const row = await lifecycleDb(trx)
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select('odi_order_item_id')
    .where('odi_usr_user_id', '=', userId)
    .where('odi_order_item_id', '<>', exceptId)
    .where('odi_is_subscription', '=', true)
    .where('odi_delete_time', 'is', null)
    .where('odi_source_conflict_time', 'is', null)
    .where('odi_tier_skipped_time', 'is', null)
    .where('pro_sbt_subscription_tier_id', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('odi_subscription_status', 'in', ['active', 'in_grace']),
        eb.and([eb('odi_subscription_status', '=', 'cancelled'), eb('odi_subscription_period_end', '>', now)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

async function applyScheduledDowngrade(trx: Kysely<DB>, clock: Clock, id: number): Promise<'applied' | 'dropped' | 'not_due'> {
  const now = clock.now();
  const ldb = lifecycleDb(trx);
  const item = await ldb
    .selectFrom('odi_order_items')
    .select(['odi_usr_user_id', 'odi_payment_source', 'odi_scheduled_pro_product_id'])
    .where('odi_order_item_id', '=', id)
    .where('odi_subscription_status', '=', 'active')
    .where('odi_scheduled_pro_product_id', 'is not', null)
    .where('odi_scheduled_change_time', '<=', now)
    .forUpdate()
    .executeTakeFirst();
  if (!item) return 'not_due';
  const plan = await readPlanProduct(trx, Number(item.odi_scheduled_pro_product_id));
  const drop = async () => {
    await ldb
      .updateTable('odi_order_items')
      .set({ odi_scheduled_pro_product_id: null, odi_scheduled_change_time: null, odi_update_time: now })
      .where('odi_order_item_id', '=', id)
      .execute();
    return 'dropped' as const;
  };
  if (!plan?.tier || !plan.tier.live || item.odi_usr_user_id === null || item.odi_payment_source === null) return drop();
  // The provider already bills the lower plan (it was changed when the downgrade was asked for).
  const previousProductId = await readProductOf(trx, id);
  await switchPlan(trx, id, plan, now);
  await recordSubscriptionEvent(trx, clock, 'subscription.changed', id, { change: 'downgrade', scheduled: true, previous_product_id: previousProductId });
  try {
    await new TierMembershipService(trx, clock).changeSubscribedTier(
      Number(item.odi_usr_user_id),
      { productId: plan.productId, tierId: plan.tier.tierId },
      item.odi_payment_source,
      'downgrade',
      orderItemRef(id),
    );
  } catch (e) {
    // The member's recorded tier is no longer above the plan's (an administrator moved them): the plan
    // follows the provider, the tier stays as the administrator left it.
    if (e instanceof TierInputError) return 'dropped';
    throw e;
  }
  return 'applied';
}

async function readProductOf(trx: Kysely<DB>, id: number): Promise<number> {
  const row = await lifecycleDb(trx).selectFrom('odi_order_items').select('odi_pro_product_id').where('odi_order_item_id', '=', id).executeTakeFirstOrThrow();
  return Number(row.odi_pro_product_id);
}
