import type { Kysely } from 'kysely';
import type { DB, SubscriptionStatus } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Settings } from '../../settings/store.js';
import { fetchUserTier, type UserTierCache } from '../../tiers/features.js';
import type { FeatureRegistry } from '../../tiers/feature-registry.js';
import { storeActive } from '../../settings/store-active.js';
import { isStoreBilled } from './refusals.js';
import { liveSubscriptions, readPlanProduct, type Subscription } from './subscriptions.js';

export type PaymentSourceMarker = 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store' | 'none';

export interface ScheduledChange {
  kind: 'downgrade';
  product_id: number;
  name: string;
  tier_name: string | null;
  effective_date: string | null;
}

export interface SubscriptionEntry {
  order_item_id: number;
  name: string;
  /** Minor units (cents). */
  price: number | null;
  period: string | null;
  /** active, cancelled, or (DESIGN 14) in_grace, on_hold, paused. */
  status: Extract<SubscriptionStatus, 'active' | 'cancelled' | 'in_grace' | 'on_hold' | 'paused'>;
  /** Renewal date while active, end date once cancelled (contract timestamp format). */
  renewal_or_end_date: string | null;
  can_cancel: boolean;
  scheduled_change: ScheduledChange | null;
  /** in_grace: access is kept until then, while the provider retries the payment (contract timestamp format). */
  grace_until: string | null;
  /** A renewal payment failed (in_grace or on_hold): the member should update the payment method at the provider. */
  billing_issue: boolean;
}

const SHOWN = ['active', 'cancelled', 'in_grace', 'on_hold', 'paused'] as const;
const shownStatus = (s: SubscriptionStatus | null): SubscriptionEntry['status'] => (SHOWN as readonly string[]).includes(s ?? '') ? (s as SubscriptionEntry['status']) : 'active';

export interface SubscriptionSummary {
  subscriptions: SubscriptionEntry[];
  current_tier: { name: string; display_name: string; tier_level: number; features: Record<string, unknown> } | null;
  payment_source: PaymentSourceMarker;
}

/**
 * Whether a cancel request on this subscription could succeed now: it is active, web-billed (store-billed
 * ones are cancelled in their store), cancellation is enabled and the store is active.
 */
export function canCancel(sub: Subscription, settings: Settings): boolean {
  return (
    sub.status === 'active' &&
    sub.source !== null &&
    !isStoreBilled(sub.source) &&
    settings.bool('subscription_cancellation_enabled') &&
    storeActive(settings)
  );
}

async function scheduledChange(db: Kysely<DB>, sub: Subscription): Promise<ScheduledChange | null> {
  if (sub.scheduledProductId === null) return null;
  const target = await readPlanProduct(db, sub.scheduledProductId);
  if (!target) return null;
  return {
    kind: 'downgrade',
    product_id: target.productId,
    name: target.name,
    tier_name: target.tier?.name ?? null,
    effective_date: sub.scheduledChangeTime ? formatTimestamp(sub.scheduledChangeTime) : null,
  };
}

/** The subscription_summary data: live subscriptions, the user's tier as recorded, the payment source. */
export async function subscriptionSummary(db: Kysely<DB>, settings: Settings, registry: FeatureRegistry, userId: number, userTiers: UserTierCache | undefined): Promise<SubscriptionSummary> {
  const subs = await liveSubscriptions(db, userId);
  const subscriptions: SubscriptionEntry[] = [];
  for (const sub of subs) {
    subscriptions.push({
      order_item_id: sub.orderItemId,
      name: sub.productName,
      price: sub.price,
      period: sub.period,
      status: shownStatus(sub.status),
      renewal_or_end_date: sub.periodEnd ? formatTimestamp(sub.periodEnd) : null,
      can_cancel: canCancel(sub, settings),
      scheduled_change: sub.status === 'active' ? await scheduledChange(db, sub) : null,
      grace_until: sub.status === 'in_grace' && sub.graceUntil ? formatTimestamp(sub.graceUntil) : null,
      billing_issue: sub.status === 'in_grace' || sub.status === 'on_hold',
    });
  }
  const tier = await fetchUserTier(db, userId, userTiers);
  // One active source per user: the newest live subscription that bears the tier names it (a second
  // source's purchase, flagged by the store, only when nothing else is live).
  const source = (subs.find((s) => s.source !== null && !s.sourceConflict) ?? subs.find((s) => s.source !== null))?.source ?? null;
  return {
    subscriptions,
    current_tier: tier
      ? { name: tier.name, display_name: tier.displayName, tier_level: tier.level, features: registry.resolveAll(tier.features) }
      : null,
    payment_source: source ?? 'none',
  };
}
