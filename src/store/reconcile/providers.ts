import type { PaymentSource, SubscriptionStatus } from '../../db/types.js';
import { graceAfter, type StoreContext } from '../events.js';
import { readPlaySubscription } from '../webhooks/android-store.js';

/** Apple's subscription status values (Get All Subscription Statuses, lastTransactions[].status). */
const APPLE_STATUS = { active: 1, expired: 2, billingRetry: 3, gracePeriod: 4, revoked: 5 } as const;

/**
 * A subscription's state in our words, as its provider reports it (DESIGN 14's statuses), the
 * billing-issue statuses (in_grace, on_hold, paused) included; how they are applied is decided in plan.ts.
 */
export type ProviderStatus = 'active' | 'cancelled' | 'expired' | 'refunded' | 'in_grace' | 'on_hold' | 'paused';

export interface ProviderReading {
  /** null: not live at the provider yet (a checkout still being paid): nothing to compare. */
  status: ProviderStatus | null;
  /** The end of the paid period as the provider states it; null when it states none. */
  periodEnd: Date | null;
  /** The provider's own word for the state (e.g. past_due, SUSPENDED, 3), for the report. */
  state: string;
  /**
   * in_grace: until when the provider keeps access while it retries: the grace end it states (App Store,
   * Play), else the source's grace setting counted from the failed renewal, as its webhook does.
   */
  graceUntil?: Date | null;
  /** paused: when the provider says the subscription resumes (null: not stated). */
  resumeTime?: Date | null;
}

/** What a reader knows of our side: the provider's reference and what we recorded. */
export interface OurSubscription {
  reference: string;
  status: SubscriptionStatus | null;
  periodEnd: Date | null;
}

export type ProviderReader = (ctx: StoreContext, ours: OurSubscription, now: Date) => Promise<ProviderReading>;

const dateOf = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : typeof v === 'number' ? new Date(v) : null);

/** The card processor's subscription object (Stripe statuses). */
export function cardStatus(status: string, cancelAtPeriodEnd: boolean): ProviderStatus | null {
  switch (status) {
    case 'active':
    case 'trialing':
      return cancelAtPeriodEnd ? 'cancelled' : 'active';
    case 'past_due':
      return 'in_grace';
    case 'unpaid':
      return 'on_hold';
    case 'paused':
      return 'paused';
    case 'canceled':
    case 'incomplete_expired':
      return 'expired';
    default:
      // incomplete: the first payment is still being made.
      return null;
  }
}

/**
 * The wallet provider's subscription (PayPal statuses). A member's own end-of-period cancel suspends
 * billing, so SUSPENDED is our cancelled when we hold it cancelled, a billing hold otherwise. A
 * subscription cancelled at the provider ends at the end of the paid period (DESIGN 14): cancelled
 * until then, expired after.
 */
export function walletStatus(status: string, ours: OurSubscription, now: Date): ProviderStatus | null {
  switch (status) {
    case 'ACTIVE':
      return 'active';
    case 'SUSPENDED':
      return ours.status === 'cancelled' ? 'cancelled' : 'on_hold';
    case 'CANCELLED':
      return ours.periodEnd !== null && ours.periodEnd.getTime() > now.getTime() ? 'cancelled' : 'expired';
    case 'EXPIRED':
      return 'expired';
    default:
      // APPROVAL_PENDING, APPROVED: not paid yet.
      return null;
  }
}

/** The App Store's subscription status, with the renewal info's auto-renew flag and a revocation. */
export function appStoreStatus(status: number, autoRenewStatus: number | undefined, revoked: boolean): ProviderStatus | null {
  if (revoked || status === APPLE_STATUS.revoked) return 'refunded';
  switch (status) {
    case APPLE_STATUS.active:
      return autoRenewStatus === 0 ? 'cancelled' : 'active';
    case APPLE_STATUS.expired:
      return 'expired';
    case APPLE_STATUS.billingRetry:
      return 'on_hold';
    case APPLE_STATUS.gracePeriod:
      return 'in_grace';
    default:
      return null;
  }
}

/** The Play Developer API's subscriptionState. */
export function playStatus(state: string): ProviderStatus | null {
  switch (state) {
    case 'SUBSCRIPTION_STATE_ACTIVE':
      return 'active';
    case 'SUBSCRIPTION_STATE_CANCELED':
      return 'cancelled';
    case 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD':
      return 'in_grace';
    case 'SUBSCRIPTION_STATE_ON_HOLD':
      return 'on_hold';
    case 'SUBSCRIPTION_STATE_PAUSED':
      return 'paused';
    case 'SUBSCRIPTION_STATE_EXPIRED':
      return 'expired';
    default:
      // PENDING, PENDING_PURCHASE_CANCELED, UNSPECIFIED.
      return null;
  }
}

/** Each source read through its own library or REST API, with the endpoints and keys the settings name. */
export const PROVIDER_READERS: Readonly<Record<PaymentSource, ProviderReader>> = Object.freeze({
  async card_processor(ctx, ours, now) {
    const sub = await ctx.deps.cardProcessor(ctx.settings).getSubscription(ours.reference);
    const status = cardStatus(sub.status, sub.cancelAtPeriodEnd);
    return {
      status,
      periodEnd: sub.currentPeriodEnd,
      state: sub.cancelAtPeriodEnd ? `${sub.status} (cancel_at_period_end)` : sub.status,
      // past_due: the renewal invoice that failed was made when the period we recorded ended; grace counts
      // from it for card_processor_grace_days, as the webhook counts it from the failed invoice.
      ...(status === 'in_grace' ? { graceUntil: graceAfter(ours.periodEnd ?? now, ctx.settings.int('card_processor_grace_days')) } : {}),
      ...(status === 'paused' ? { resumeTime: null } : {}),
    };
  },
  async wallet_provider(ctx, ours, now) {
    const sub = await ctx.deps.walletProvider(ctx.settings).getSubscription(ours.reference);
    return { status: walletStatus(sub.status, ours, now), periodEnd: sub.status === 'ACTIVE' ? sub.nextBillingTime : null, state: sub.status };
  },
  async ios_store(ctx, ours) {
    // Loaded here, not at start: the module extends the App Store library's client.
    const { readAppStoreSubscription } = await import('./app-store-api.js');
    const sub = await readAppStoreSubscription(ctx, ours.reference);
    const autoRenew = typeof sub.renewal?.autoRenewStatus === 'number' ? sub.renewal.autoRenewStatus : undefined;
    const status = appStoreStatus(sub.status, autoRenew, typeof sub.transaction.revocationDate === 'number');
    return {
      status,
      periodEnd: typeof sub.transaction.expiresDate === 'number' ? new Date(sub.transaction.expiresDate) : null,
      state: `status ${sub.status}${autoRenew === undefined ? '' : `, autoRenewStatus ${autoRenew}`}`,
      // The grace period's end is the renewal info's, as in a DID_FAIL_TO_RENEW GRACE_PERIOD notification.
      ...(status === 'in_grace' ? { graceUntil: typeof sub.renewal?.gracePeriodExpiresDate === 'number' ? new Date(sub.renewal.gracePeriodExpiresDate) : null } : {}),
    };
  },
  async android_store(ctx, ours) {
    const packageName = ctx.settings.string('android_store_package_name');
    if (!packageName) throw new Error('android_store_package_name is not set');
    const sub = await readPlaySubscription(ctx, packageName, ours.reference);
    const state = String(sub.subscriptionState ?? '');
    const status = playStatus(state);
    const expiry = dateOf((sub.lineItems as Array<Record<string, unknown>> | undefined)?.[0]?.expiryTime);
    const paused = sub.pausedStateContext as Record<string, unknown> | undefined;
    return {
      status,
      periodEnd: expiry,
      state,
      // In grace the line item's expiry is the grace period's end (as the webhook reads it).
      ...(status === 'in_grace' ? { graceUntil: expiry } : {}),
      ...(status === 'paused' ? { resumeTime: dateOf(paused?.autoResumeTime) } : {}),
    };
  },
});
