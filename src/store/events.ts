import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import type { BillingSource } from '../tiers/membership.js';
import type { StoreDeps } from './deps.js';

/**
 * What a provider event means to the store, whatever the source. Purchases and renewals go through the
 * one grant path; expiry, cancellation (taking effect) and refund through the one removal path;
 * a scheduled cancellation and its undoing only change the subscription's status.
 */
export type StoreEventKind =
  | 'purchase'
  | 'renewal'
  | 'cancellation_scheduled'
  | 'cancellation_undone'
  | 'expiry'
  | 'cancellation'
  | 'refund'
  /** A checkout whose payment is still on its way (a bank debit): its order stays pending and grants nothing. */
  | 'payment_pending'
  /** That payment failed: the pending order is cancelled. */
  | 'payment_failed'
  /** The store moved the subscription to another product now (App Store UPGRADE): the one grant path. */
  | 'product_change'
  /** The product that renews changed (App Store DOWNGRADE; a null product: the change was undone). */
  | 'product_change_scheduled'
  /** A renewal payment failed and the provider retries: access kept until graceUntil (DESIGN 14). */
  | 'in_grace'
  /** The provider holds the account (retrying, or given up retrying for now): access removed, recoverable. */
  | 'on_hold'
  /** The subscription is paused until resumeTime: access removed. */
  | 'paused'
  /** The subscription is active again at the provider after a billing issue or a pause (or a cancellation undone). */
  | 'recovery';

/** The billing-issue kinds (DESIGN 14): they act on a subscription already recorded, never create one. */
export const BILLING_ISSUE_KINDS: readonly StoreEventKind[] = ['in_grace', 'on_hold', 'paused', 'recovery'];

/**
 * One normalised event. User and product are named as the provider names them; the processor resolves
 * them (our ids, the store account token, the provider's product reference, or the order item already
 * recorded for the subscription).
 */
export interface StoreEvent {
  kind: StoreEventKind;
  source: BillingSource;
  /** The provider's subscription reference (a one-time payment's reference when there is none). */
  reference: string | null;
  /**
   * The subscription this one replaces at the store (a Play linkedPurchaseToken): its order item goes on
   * under the new reference, and the change of product moves the tier through the grant path.
   */
  replaces?: string | null;
  /** Other ways the provider names the purchase, tried when the reference matches nothing. */
  lookup?: { orderId?: number | null; paymentIntentId?: string | null; invoiceId?: string | null };
  user: { userId?: number | null; accountToken?: string | null };
  product: { productId?: number | null; providerProductId?: string | null };
  /** End of the paid period as the provider reports it; null keeps what is recorded. */
  periodEnd: Date | null;
  /** The provider's time for the event: the ordering watermark. */
  eventTime: Date;
  /**
   * True when no verified provider data states a time and eventTime is when we received the event: such
   * a time is never compared with the provider's times (never the watermark, never judged stale), so it
   * never outranks a signed time.
   */
  receiptTime?: boolean;
  /** A pending order (our checkout) that this purchase completes. */
  orderId?: number | null;
  /** Minor units (a refund: the amount refunded so far). */
  amount?: number | null;
  /**
   * A refund of the whole payment (true) or of part of it (false); unknown: whole when the amount covers
   * the item's price. Only a whole refund of the current period's payment removes (DESIGN 13).
   */
  refundWhole?: boolean | null;
  currency?: string | null;
  /** in_grace: until when the provider keeps access while it retries (null: the source's grace setting from the event time). */
  graceUntil?: Date | null;
  /** paused: when the provider says the subscription resumes (null: not stated). */
  resumeTime?: Date | null;
  /** Provider payment identifiers worth keeping on the order. */
  payment?: { sessionId?: string | null; paymentIntentId?: string | null; invoiceId?: string | null; saleId?: string | null };
}

/** What the webhook channel and the adapters work with. */
export interface StoreContext {
  db: Kysely<DB>;
  settings: Settings;
  clock: Clock;
  deps: StoreDeps;
}

/** A delivery whose provider signature has been verified. */
export interface VerifiedDelivery {
  eventId: string;
  eventType: string;
  eventTime: Date;
  /** What is kept in wbh_webhook_logs: enough to normalise the event again on replay. */
  payload: unknown;
  /** Whether the store acts on this type of event (decided without calling the provider). */
  acts: boolean;
  /** The internal events (may call the provider's API); empty when the store does not act on this type. */
  normalise(ctx: StoreContext): Promise<StoreEvent[]>;
}

/** A delivery as its webhook log row kept it (verified when it arrived). */
export interface LoggedDelivery {
  eventId: string;
  eventType: string;
  eventTime: Date;
  payload: any;
}

export interface WebhookRequest {
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** One billing source's webhook: verify the provider's own signature before anything else. */
export interface WebhookAdapter {
  source: BillingSource;
  /** Throws a 400 AuthenticationError when the signature material is missing, 401 when it does not verify. */
  verify(req: WebhookRequest, ctx: StoreContext): Promise<VerifiedDelivery>;
  /** The delivery again from its log row, for an operator's replay (no signature to check: it was checked on arrival). */
  restore(logged: LoggedDelivery, ctx: StoreContext): VerifiedDelivery;
}

export const header = (req: WebhookRequest, name: string): string | undefined => {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

export const intOrNull = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
};

const DAY_MS = 86_400_000;

/** The end of a web source's grace period: `days` (its grace setting) after the failure. */
export const graceAfter = (failedAt: Date, days: number): Date => new Date(failedAt.getTime() + days * DAY_MS);
