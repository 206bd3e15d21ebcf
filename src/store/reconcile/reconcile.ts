import type { Kysely } from 'kysely';
import type { DB, PaymentSource, SubscriptionStatus } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import { inTransaction } from '../../tiers/transaction.js';
import type { TierMembershipService } from '../../tiers/membership.js';
import type { StoreContext, StoreEvent } from '../events.js';
import { findItemById, type OrderItemRow } from '../orders.js';
import { applyStoreEvent, type EventOutcome } from '../processor.js';
import { planReconcile, type DriftAction } from './plan.js';
import { PROVIDER_READERS, type ProviderReading } from './providers.js';

/** An expired subscription is read again for this long after its period ended (a renewal may have been lost). */
export const RECENTLY_ENDED_DAYS = 35;
/** Subscriptions read per query; a run goes through all of them. */
const PAGE = 200;
const MAX_ERROR = 300;

export interface DriftEntry {
  order_item_id: number;
  source: PaymentSource;
  ours: { status: SubscriptionStatus | null; period_end: string | null };
  provider: { status: ProviderReading['status']; state: string; period_end: string | null };
  action: DriftAction;
}

export interface ReconcileReport {
  /** Subscriptions whose provider answered. */
  checked: number;
  /** Every subscription where ours differed from the provider's, and what was (or would be) done. */
  drift: DriftEntry[];
  /** Drift entries applied (0 on a dry run). */
  applied: number;
  /** Subscriptions whose provider could not be read: nothing about them changed. */
  unreachable: Array<{ order_item_id: number; source: PaymentSource; error: string }>;
  dry_run: boolean;
}

export interface ReconcileOptions {
  userId?: number | null;
  source?: PaymentSource | null;
  dryRun?: boolean;
}

interface Candidate {
  id: number;
  source: PaymentSource;
  reference: string;
  status: SubscriptionStatus | null;
  periodEnd: Date | null;
}

const ts = (d: Date | null) => (d === null ? null : formatTimestamp(d));

/** The live (billing issues included) and recently ended subscriptions, in id order after `afterId`. */
async function candidates(db: Kysely<DB>, opts: ReconcileOptions, now: Date, afterId: number): Promise<Candidate[]> {
  const endedSince = new Date(now.getTime() - RECENTLY_ENDED_DAYS * 86_400_000);
  const rows = await db
    .selectFrom('odi_order_items')
    .select(['odi_order_item_id', 'odi_payment_source', 'odi_subscription_reference', 'odi_subscription_status', 'odi_subscription_period_end'])
    .where('odi_order_item_id', '>', afterId)
    .where('odi_payment_source', 'is not', null)
    .where('odi_subscription_reference', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('odi_subscription_status', 'in', ['active', 'cancelled', 'in_grace', 'on_hold', 'paused']),
        eb.and([eb('odi_subscription_status', '=', 'expired'), eb('odi_subscription_period_end', '>=', endedSince)]),
      ]),
    )
    .$if(opts.userId != null, (q) => q.where('odi_usr_user_id', '=', opts.userId!))
    .$if(opts.source != null, (q) => q.where('odi_payment_source', '=', opts.source!))
    .orderBy('odi_order_item_id')
    .limit(PAGE)
    .execute();
  return rows.map((r) => ({
    id: Number(r.odi_order_item_id),
    source: r.odi_payment_source!,
    reference: r.odi_subscription_reference!,
    status: r.odi_subscription_status,
    periodEnd: r.odi_subscription_period_end,
  }));
}

/** The provider's word on one subscription, or why it could not be had. */
async function readProvider(ctx: StoreContext, c: Candidate, now: Date): Promise<{ reading: ProviderReading } | { error: string }> {
  try {
    return { reading: await PROVIDER_READERS[c.source](ctx, { reference: c.reference, status: c.status, periodEnd: c.periodEnd }, now) };
  } catch (e) {
    return { error: (e instanceof Error ? e.message : String(e)).slice(0, MAX_ERROR) };
  }
}

/**
 * Applies a plan to the subscription under its row lock, planned again from the locked row (an event
 * may have arrived since it was read). The events take the time the provider was read as their provider
 * time: the provider's state already includes everything before it, so a late delivery of an older
 * event changes nothing afterwards, and an event that happened after the read outranks the repair.
 */
async function applyPlan(trx: Kysely<DB>, ctx: StoreContext, membership: TierMembershipService, c: Candidate, reading: ProviderReading, readAt: Date): Promise<boolean> {
  const item: OrderItemRow | undefined = await findItemById(trx, c.id);
  if (!item) return false;
  const plan = planReconcile({ status: item.odi_subscription_status, periodEnd: item.odi_subscription_period_end }, reading, ctx.clock.now());
  if (plan.events.length === 0) return false;
  const deps = { clock: ctx.clock, membership: membership.within(trx).noting({ how: 'reconcile' }), webhookLogId: 0 };
  // In a billing issue the provider's period end is no paid period (an unpaid renewal's, or the grace
  // end): the recorded period stays, as the webhooks keep it.
  const billingIssue = reading.status === 'in_grace' || reading.status === 'on_hold' || reading.status === 'paused';
  let changed = false;
  for (const kind of plan.events) {
    const ev: StoreEvent = {
      kind,
      source: c.source,
      reference: c.reference,
      lookup: { orderId: item.odi_ord_order_id },
      user: {},
      product: {},
      periodEnd: billingIssue ? null : reading.periodEnd,
      eventTime: readAt,
      ...(kind === 'refund' ? { refundWhole: true } : {}),
      ...(kind === 'in_grace' ? { graceUntil: reading.graceUntil ?? null } : {}),
      ...(kind === 'paused' ? { resumeTime: reading.resumeTime ?? null } : {}),
    };
    const outcomes: EventOutcome[] = await applyStoreEvent(trx, deps, ev);
    const first = outcomes[0];
    // The item exists, so nothing is kept pending (the webhook log id above is never used).
    if (!first || first.outcome === 'pending' || first.outcome === 'unknown_subscription' || first.outcome === 'unresolved') {
      throw new Error(`Reconciling order item ${c.id} found no subscription to apply ${kind} to`);
    }
    if (first.outcome !== 'stale' && first.outcome !== 'unchanged') changed = true;
  }
  return changed;
}

/**
 * Reads each live (billing issues included) or recently ended subscription (optionally one user's, or one source's) from its
 * provider and applies the differences, the provider's state winning, through the store's processor
 * and so the one grant and the one removal path; tier changes are recorded with how 'reconcile'. A
 * provider that cannot be read changes nothing and is listed as unreachable. A dry run only reports.
 */
export async function reconcileSubscriptions(ctx: StoreContext, membership: TierMembershipService, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
  const report: ReconcileReport = { checked: 0, drift: [], applied: 0, unreachable: [], dry_run: opts.dryRun === true };
  const now = ctx.clock.now();
  let afterId = 0;
  for (;;) {
    const page = await candidates(ctx.db, opts, now, afterId);
    for (const c of page) {
      const readAt = ctx.clock.now();
      const read = await readProvider(ctx, c, readAt);
      if ('error' in read) {
        report.unreachable.push({ order_item_id: c.id, source: c.source, error: read.error });
        continue;
      }
      report.checked++;
      const plan = planReconcile({ status: c.status, periodEnd: c.periodEnd }, read.reading, readAt);
      if (plan.action === 'none') continue;
      report.drift.push({
        order_item_id: c.id,
        source: c.source,
        ours: { status: c.status, period_end: ts(c.periodEnd) },
        provider: { status: read.reading.status, state: read.reading.state, period_end: ts(read.reading.periodEnd) },
        action: plan.action,
      });
      if (opts.dryRun || plan.events.length === 0) continue;
      if (await inTransaction(ctx.db, (trx) => applyPlan(trx, ctx, membership, c, read.reading, readAt))) report.applied++;
    }
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.id;
  }
  return report;
}
