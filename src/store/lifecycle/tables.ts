import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB, SubscriptionStatus } from '../../db/types.js';
import type { BillingSource } from '../../tiers/membership.js';

type Opt<T> = ColumnType<T | null, T | null | undefined, T | null>;
type OptTime = ColumnType<Date | null, Date | null | undefined, Date | null>;

export type SubscriptionPeriod = 'day' | 'week' | 'month' | 'year';

/** The product columns the lifecycle reads (0002, the store's 0008, and 0010). */
interface LifecycleProducts {
  pro_product_id: Generated<number>;
  pro_name: string;
  pro_is_active: Opt<boolean>;
  pro_delete_time: OptTime;
  pro_sbt_subscription_tier_id: Opt<number>;
  pro_subscription_period: Opt<SubscriptionPeriod>;
  pro_price: Opt<number>;
}

/** The order-item columns the lifecycle reads and writes. */
interface LifecycleOrderItems {
  odi_order_item_id: Generated<number>;
  odi_pro_product_id: number;
  odi_usr_user_id: Opt<number>;
  /** Minor units in odi_currency. */
  odi_price: Opt<number>;
  odi_currency: Generated<string>;
  odi_is_subscription: Opt<boolean>;
  odi_payment_source: Opt<BillingSource>;
  odi_subscription_status: Opt<SubscriptionStatus>;
  odi_subscription_period_start: OptTime;
  odi_subscription_period_end: OptTime;
  odi_subscription_cancel_at_period_end: Opt<boolean>;
  odi_subscription_cancelled_time: OptTime;
  odi_scheduled_pro_product_id: Opt<number>;
  odi_scheduled_change_time: OptTime;
  odi_source_conflict_time: OptTime;
  odi_tier_skipped_time: OptTime;
  odi_subscription_grace_until: OptTime;
  odi_subscription_resume_time: OptTime;
  odi_refund_amount: Opt<number>;
  odi_refund_note: Opt<string>;
  odi_refund_time: OptTime;
  odi_status_change_time: ColumnType<Date, Date | undefined, Date>;
  odi_create_time: ColumnType<Date, Date | undefined, Date>;
  odi_update_time: ColumnType<Date, Date | undefined, Date>;
  odi_delete_time: OptTime;
}

/** The tables as the lifecycle sees them, next to the core ones. */
export type LifecycleDB = Omit<DB, 'pro_products' | 'odi_order_items'> & {
  pro_products: LifecycleProducts;
  odi_order_items: LifecycleOrderItems;
};

/** The same handle (or transaction), typed with the lifecycle's view of the store tables. */
export const lifecycleDb = (db: Kysely<DB>): Kysely<LifecycleDB> => db as unknown as Kysely<LifecycleDB>;
