import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { ORDER_STATUS } from '../../../store/orders.js';
import { lifecycleDb, type SubscriptionPeriod } from '../../../store/lifecycle/tables.js';
import { BILLING_SOURCES, type BillingSource } from '../../../tiers/membership.js';

/** How many of a period make a month, for monthly recurring revenue (a year is 365 days, 52 weeks). */
export const MONTHS_PER_PERIOD: Record<SubscriptionPeriod, number> = { day: 365 / 12, week: 52 / 12, month: 1, year: 1 / 12 };

export const CHART_DAYS = 30;
export const RECENT_ROWS = 10;

export interface DashboardFigures {
  tiers: Array<{ id: number; name: string; displayName: string; level: number; active: boolean; members: number }>;
  /** Live users in no tier. */
  withoutTier: number;
  users: number;
  /** Per billing source: renewing (active) and ending at period end (cancelled) subscriptions. */
  subscriptions: Array<{ source: BillingSource; active: number; ending: number }>;
  /** Monthly recurring revenue per currency (lower-case code), in minor units, from renewing subscriptions. */
  mrr: Array<{ currency: string; minor: number }>;
  /** Renewing subscriptions whose product has no billing period: counted above, left out of MRR. */
  withoutPeriod: number;
  signups: Array<{ userId: number; email: string; name: string; time: Date }>;
  cancellations: Array<{ itemId: number; userId: number | null; email: string | null; product: string; source: BillingSource | null; time: Date; status: string | null }>;
  /** Orders (not deleted): all of them, and those whose payment failed or is still pending. */
  orders: { total: number; failed: number; pending: number };
  /** The chart's days (UTC, oldest first) with sign-ups and cancellations per day. */
  days: string[];
  signupsPerDay: number[];
  cancellationsPerDay: number[];
}

const dayKey = (d: Date) => d.toISOString().slice(0, 10);

/** The last `n` UTC days ending today, oldest first, as YYYY-MM-DD. */
export function lastDays(now: Date, n: number): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: n }, (_, i) => dayKey(new Date(today - (n - 1 - i) * 86_400_000)));
}

function perDay(days: string[], times: Date[]): number[] {
  const index = new Map(days.map((d, i) => [d, i]));
  const counts = days.map(() => 0);
  for (const t of times) {
    const i = index.get(dayKey(t));
    if (i !== undefined) counts[i]! += 1;
  }
  return counts;
}

/** Everything the admin dashboard shows, read in one go (each figure is one query). */
export async function dashboardFigures(db: Kysely<DB>, now: Date): Promise<DashboardFigures> {
  const ldb = lifecycleDb(db);
  const days = lastDays(now, CHART_DAYS);
  const since = new Date(`${days[0]}T00:00:00Z`);

  const [tierRows, userCount, tierless, subRows, recurring, signups, cancellations, signupTimes, cancelTimes, orderRows] = await Promise.all([
    db
      .selectFrom('sbt_subscription_tiers')
      .leftJoin('grm_group_members', 'grm_sbt_subscription_tier_id', 'sbt_subscription_tier_id')
      .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level', 'sbt_is_active'])
      .select((eb) => eb.fn.count<string | number>('grm_group_member_id').as('members'))
      .where('sbt_delete_time', 'is', null)
      .groupBy('sbt_subscription_tier_id')
      .orderBy('sbt_tier_level')
      .orderBy('sbt_name')
      .execute(),
    db.selectFrom('usr_users').select((eb) => eb.fn.countAll<string | number>().as('n')).where('usr_delete_time', 'is', null).executeTakeFirstOrThrow(),
    db
      .selectFrom('usr_users')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('usr_delete_time', 'is', null)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('grm_group_members').select('grm_group_member_id').whereRef('grm_foreign_key_id', '=', 'usr_user_id').where('grm_sbt_subscription_tier_id', 'is not', null))),
      )
      .executeTakeFirstOrThrow(),
    ldb
      .selectFrom('odi_order_items')
      .select(['odi_payment_source', 'odi_subscription_status'])
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('odi_is_subscription', '=', true)
      .where('odi_delete_time', 'is', null)
      .where('odi_subscription_status', 'in', ['active', 'cancelled'])
      .groupBy(['odi_payment_source', 'odi_subscription_status'])
      .execute(),
    ldb
      .selectFrom('odi_order_items')
      .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
      .select(['odi_price', 'odi_currency', 'pro_subscription_period'])
      .where('odi_is_subscription', '=', true)
      .where('odi_delete_time', 'is', null)
      .where('odi_subscription_status', '=', 'active')
      .execute(),
    db
      .selectFrom('usr_users')
      .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_create_time'])
      .where('usr_delete_time', 'is', null)
      .orderBy('usr_create_time', 'desc')
      .orderBy('usr_user_id', 'desc')
      .limit(RECENT_ROWS)
      .execute(),
    ldb
      .selectFrom('odi_order_items')
      .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
      .leftJoin('usr_users', 'usr_user_id', 'odi_usr_user_id')
      .select(['odi_order_item_id', 'usr_user_id', 'usr_email', 'pro_name', 'odi_payment_source', 'odi_subscription_cancelled_time', 'odi_subscription_status'])
      .where('odi_subscription_cancelled_time', 'is not', null)
      .where('odi_delete_time', 'is', null)
      .orderBy('odi_subscription_cancelled_time', 'desc')
      .orderBy('odi_order_item_id', 'desc')
      .limit(RECENT_ROWS)
      .execute(),
    db.selectFrom('usr_users').select('usr_create_time').where('usr_delete_time', 'is', null).where('usr_create_time', '>=', since).execute(),
    ldb
      .selectFrom('odi_order_items')
      .select('odi_subscription_cancelled_time')
      .where('odi_delete_time', 'is', null)
      .where('odi_subscription_cancelled_time', '>=', since)
      .execute(),
    db
      .selectFrom('ord_orders')
      .select('ord_status')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('ord_delete_time', 'is', null)
      .groupBy('ord_status')
      .execute(),
  ]);
  const ordersIn = (status: number | null) => orderRows.filter((r) => status === null || Number(r.ord_status) === status).reduce((n, r) => n + Number(r.n), 0);

  const subscriptions = BILLING_SOURCES.map((source) => {
    const count = (status: string) => Number(subRows.find((r) => r.odi_payment_source === source && r.odi_subscription_status === status)?.n ?? 0);
    return { source, active: count('active'), ending: count('cancelled') };
  });

  // Summed per currency in fractional minor units, rounded once at the end.
  const sums = new Map<string, number>();
  let withoutPeriod = 0;
  for (const r of recurring) {
    if (r.pro_subscription_period === null || !(r.pro_subscription_period in MONTHS_PER_PERIOD)) {
      withoutPeriod += 1;
      continue;
    }
    if (r.odi_price === null) continue;
    const currency = r.odi_currency.toLowerCase();
    sums.set(currency, (sums.get(currency) ?? 0) + Number(r.odi_price) * MONTHS_PER_PERIOD[r.pro_subscription_period]);
  }

  return {
    tiers: tierRows.map((t) => ({ id: t.sbt_subscription_tier_id, name: t.sbt_name, displayName: t.sbt_display_name, level: t.sbt_tier_level, active: t.sbt_is_active, members: Number(t.members) })),
    withoutTier: Number(tierless.n),
    users: Number(userCount.n),
    subscriptions,
    mrr: [...sums.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([currency, minor]) => ({ currency, minor: Math.round(minor) })),
    withoutPeriod,
    signups: signups.map((u) => ({ userId: u.usr_user_id, email: u.usr_email, name: [u.usr_first_name, u.usr_last_name].filter(Boolean).join(' '), time: u.usr_create_time })),
    cancellations: cancellations.map((c) => ({
      itemId: c.odi_order_item_id,
      userId: c.usr_user_id === null ? null : Number(c.usr_user_id),
      email: c.usr_email,
      product: c.pro_name,
      source: c.odi_payment_source,
      time: c.odi_subscription_cancelled_time!,
      status: c.odi_subscription_status,
    })),
    orders: { total: ordersIn(null), failed: ordersIn(ORDER_STATUS.failed), pending: ordersIn(ORDER_STATUS.pending) },
    days,
    signupsPerDay: perDay(days, signupTimes.map((r) => r.usr_create_time)),
    cancellationsPerDay: perDay(days, cancelTimes.map((r) => r.odi_subscription_cancelled_time!)),
  };
}
