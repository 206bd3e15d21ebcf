import { sql, type Kysely } from 'kysely';
import type { DB, SubscriptionStatus } from '../../db/types.js';
import type { BillingSource } from '../../tiers/membership.js';
import { lifecycleDb, type SubscriptionPeriod } from './tables.js';

/** A subscription as the lifecycle works with it: an order item with its product and the product's tier. */
export interface Subscription {
  orderItemId: number;
  userId: number;
  productId: number;
  productName: string;
  period: SubscriptionPeriod | null;
  /** Minor units in `currency`. */
  price: number | null;
  currency: string;
  source: BillingSource | null;
  status: SubscriptionStatus | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  cancelledTime: Date | null;
  createTime: Date;
  tier: { tierId: number; name: string; displayName: string; level: number } | null;
  scheduledProductId: number | null;
  scheduledChangeTime: Date | null;
  /** A second source's purchase, refused for tier purposes by the store: it never grants or removes a tier. */
  sourceConflict: boolean;
  /** A purchase whose grant the upgrade-only rule skipped: it holds no tier, so its end removes none. */
  tierSkipped: boolean;
  /** in_grace: access is kept until then (DESIGN 14). */
  graceUntil: Date | null;
  /** paused: when the provider says it resumes. */
  resumeTime: Date | null;
}

/** The statuses the member's lifecycle controls act on: a subscription that still gives access. */
export const LIVE_STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled'];
/**
 * The statuses the member sees in the summary: live ones, and those with a billing issue or a pause that
 * the provider can still recover (DESIGN 14), so the member learns what is wrong and what to do.
 */
export const SHOWN_STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled', 'in_grace', 'on_hold', 'paused'];

function baseQuery(db: Kysely<DB>) {
  return lifecycleDb(db)
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .select([
      'odi_order_item_id',
      'odi_usr_user_id',
      'odi_pro_product_id',
      'odi_price',
      'odi_currency',
      'odi_payment_source',
      'odi_subscription_status',
      'odi_subscription_period_start',
      'odi_subscription_period_end',
      'odi_subscription_cancelled_time',
      'odi_scheduled_pro_product_id',
      'odi_scheduled_change_time',
      'odi_source_conflict_time',
      'odi_tier_skipped_time',
      'odi_subscription_grace_until',
      'odi_subscription_resume_time',
      'odi_create_time',
      'pro_name',
      'pro_subscription_period',
      'sbt_subscription_tier_id',
      'sbt_name',
      'sbt_display_name',
      'sbt_tier_level',
    ])
    .where('odi_is_subscription', '=', true)
    .where('odi_delete_time', 'is', null);
}

type Row = Awaited<ReturnType<ReturnType<typeof baseQuery>['executeTakeFirstOrThrow']>>;

function toSubscription(r: Row): Subscription {
  return {
    orderItemId: Number(r.odi_order_item_id),
    userId: Number(r.odi_usr_user_id),
    productId: Number(r.odi_pro_product_id),
    productName: r.pro_name,
    period: r.pro_subscription_period,
    price: r.odi_price === null ? null : Number(r.odi_price),
    currency: r.odi_currency,
    source: r.odi_payment_source,
    status: r.odi_subscription_status,
    periodStart: r.odi_subscription_period_start,
    periodEnd: r.odi_subscription_period_end,
    cancelledTime: r.odi_subscription_cancelled_time,
    createTime: r.odi_create_time,
    tier:
      r.sbt_subscription_tier_id === null
        ? null
        : { tierId: Number(r.sbt_subscription_tier_id), name: r.sbt_name!, displayName: r.sbt_display_name!, level: Number(r.sbt_tier_level) },
    scheduledProductId: r.odi_scheduled_pro_product_id === null ? null : Number(r.odi_scheduled_pro_product_id),
    scheduledChangeTime: r.odi_scheduled_change_time,
    sourceConflict: r.odi_source_conflict_time !== null,
    tierSkipped: r.odi_tier_skipped_time !== null,
    graceUntil: r.odi_subscription_grace_until,
    resumeTime: r.odi_subscription_resume_time,
  };
}

/** The user's active and cancelled subscriptions, and those in a billing issue or paused, newest first. */
export async function liveSubscriptions(db: Kysely<DB>, userId: number): Promise<Subscription[]> {
  const rows = await baseQuery(db)
    .where('odi_usr_user_id', '=', userId)
    .where('odi_subscription_status', 'in', SHOWN_STATUSES)
    .orderBy('odi_order_item_id', 'desc')
    .execute();
  return rows.map(toSubscription);
}

/**
 * One of the user's subscription order items, locked for the rest of the transaction so that two
 * lifecycle requests (or a request and the period-end task) on the same item run one after the other.
 */
export async function lockedSubscription(db: Kysely<DB>, userId: number, orderItemId: number): Promise<Subscription | null> {
  const row = await baseQuery(db)
    .where('odi_order_item_id', '=', orderItemId)
    .where('odi_usr_user_id', '=', userId)
    .forUpdate('odi_order_items')
    .executeTakeFirst();
  return row ? toSubscription(row) : null;
}

/** The user's current subscription (the newest live one that bears the tier), locked like lockedSubscription. */
export async function lockedCurrentSubscription(db: Kysely<DB>, userId: number): Promise<Subscription | null> {
  const row = await baseQuery(db)
    .where('odi_usr_user_id', '=', userId)
    .where('odi_subscription_status', 'in', LIVE_STATUSES)
    .orderBy(sql`odi_source_conflict_time is not null`)
    .orderBy('odi_order_item_id', 'desc')
    .forUpdate('odi_order_items')
    .executeTakeFirst();
  return row ? toSubscription(row) : null;
}

/** A product as a tier change target: its tier and its period. */
export interface PlanProduct {
  productId: number;
  name: string;
  period: SubscriptionPeriod | null;
  /** Minor units. */
  price: number | null;
  tier: { tierId: number; name: string; displayName: string; level: number; live: boolean } | null;
  active: boolean;
}

export async function readPlanProduct(db: Kysely<DB>, productId: number): Promise<PlanProduct | null> {
  const r = await lifecycleDb(db)
    .selectFrom('pro_products')
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .select([
      'pro_product_id',
      'pro_name',
      'pro_is_active',
      'pro_delete_time',
      'pro_subscription_period',
      'pro_price',
      'sbt_subscription_tier_id',
      'sbt_name',
      'sbt_display_name',
      'sbt_tier_level',
      'sbt_is_active',
      'sbt_delete_time',
    ])
    .where('pro_product_id', '=', productId)
    .executeTakeFirst();
  if (!r) return null;
  return {
    productId: Number(r.pro_product_id),
    name: r.pro_name,
    period: r.pro_subscription_period,
    price: r.pro_price === null ? null : Number(r.pro_price),
    active: r.pro_is_active === true && r.pro_delete_time === null,
    tier:
      r.sbt_subscription_tier_id === null
        ? null
        : {
            tierId: Number(r.sbt_subscription_tier_id),
            name: r.sbt_name!,
            displayName: r.sbt_display_name!,
            level: Number(r.sbt_tier_level),
            live: r.sbt_is_active === true && r.sbt_delete_time === null,
          },
  };
}
