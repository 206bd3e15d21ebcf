import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/** Why a tier membership changed (or did not): a closed set. */
export type TierChangeReason =
  | 'purchase'
  | 'renewal'
  | 'purchase_skipped_lower_level'
  | 'renewal_skipped_lower_level'
  | 'purchase_skipped_tier_unavailable'
  | 'renewal_skipped_tier_unavailable'
  /** A subscription back to active after a billing issue or a pause (DESIGN 14). */
  | 'recovery'
  | 'recovery_skipped_lower_level'
  | 'recovery_skipped_tier_unavailable'
  | 'expiry'
  /** The provider holds the account (payment failed, grace over) or paused the subscription: access removed. */
  | 'on_hold'
  | 'paused'
  | 'cancellation'
  | 'refund'
  | 'manual'
  /** The store refused a purchase for tier purposes: another billing source is active for the user. */
  | 'purchase_refused_other_source'
  // A member's own plan change (subscription lifecycle): up or down to another tier's product.
  | 'upgrade'
  | 'downgrade';

/** What a change points back to (an order item, a webhook log entry, ...). */
export interface ChangeReference {
  type: string;
  id: number | null;
}

export const TIER_ENTITY_TYPE = 'subscription_tier';
export const TIER_MEMBERSHIP_FIELD = 'tier_membership';

export interface TierChange {
  /** The tier acted on: joined, left, kept, or whose grant was skipped (null: a manual no-tier to no-tier). */
  tierId: number | null;
  userId: number;
  oldTierId: number | null;
  newTierId: number | null;
  reason: TierChangeReason;
  reference: ChangeReference | null;
  changedBy: number | null;
  at: Date;
  metadata: Record<string, unknown>;
}

/** Writes one cht_change_tracking row for a tier membership change or skip. */
/** Writes many tier change rows in one statement (a bulk manual assignment). */
export async function recordTierChanges(db: Kysely<DB>, changes: TierChange[]): Promise<void> {
  if (changes.length === 0) return;
  await db.insertInto('cht_change_tracking').values(changes.map(tierChangeRow)).execute();
}

const tierChangeRow = (c: TierChange) => ({
  cht_entity_type: TIER_ENTITY_TYPE,
  cht_entity_id: c.tierId,
  cht_usr_user_id: c.userId,
  cht_field_name: TIER_MEMBERSHIP_FIELD,
  cht_old_value: c.oldTierId === null ? null : String(c.oldTierId),
  cht_new_value: c.newTierId === null ? null : String(c.newTierId),
  cht_change_time: c.at,
  cht_change_reason: c.reason,
  cht_reference_type: c.reference?.type ?? null,
  cht_reference_id: c.reference?.id ?? null,
  cht_changed_by_usr_user_id: c.changedBy,
  cht_metadata: JSON.stringify(c.metadata),
});

export async function recordTierChange(db: Kysely<DB>, c: TierChange): Promise<void> {
  await db.insertInto('cht_change_tracking').values(tierChangeRow(c)).execute();
}

export const ORDER_ITEM_ENTITY_TYPE = 'order_item';
export const SUBSCRIPTION_STATUS_FIELD = 'subscription_status';

/** A subscription's billing state changing (DESIGN 14): one row per transition, next to any tier rows. */
export interface SubscriptionStatusChange {
  orderItemId: number;
  userId: number | null;
  oldStatus: string | null;
  newStatus: string;
  /** The transition: in_grace, on_hold, paused, recovered. */
  reason: 'in_grace' | 'on_hold' | 'paused' | 'recovered';
  at: Date;
  metadata: Record<string, unknown>;
}

/** Writes one cht_change_tracking row for an order item's subscription status transition. */
export async function recordSubscriptionStatusChange(db: Kysely<DB>, c: SubscriptionStatusChange): Promise<void> {
  await db
    .insertInto('cht_change_tracking')
    .values({
      cht_entity_type: ORDER_ITEM_ENTITY_TYPE,
      cht_entity_id: c.orderItemId,
      cht_usr_user_id: c.userId,
      cht_field_name: SUBSCRIPTION_STATUS_FIELD,
      cht_old_value: c.oldStatus,
      cht_new_value: c.newStatus,
      cht_change_time: c.at,
      cht_change_reason: c.reason,
      cht_reference_type: ORDER_ITEM_ENTITY_TYPE,
      cht_reference_id: c.orderItemId,
      cht_changed_by_usr_user_id: null,
      cht_metadata: JSON.stringify(c.metadata),
    })
    .execute();
}
