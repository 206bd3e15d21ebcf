import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { ApiError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { Settings } from '../../settings/store.js';
import { StripeCardProcessorClient } from '../providers/card-processor.js';
import { RestWalletProviderClient } from '../providers/wallet-provider.js';

/** The sources billed on the web, whose subscriptions the member manages here. */
export type WebBilledSource = 'card_processor' | 'wallet_provider';

/** What the lifecycle needs of a web-billed subscription at its provider. */
export interface PlanBilling {
  source: WebBilledSource;
  /** Ends the subscription at the provider now. */
  cancelNow(ref: string): Promise<void>;
  /** Stops renewal; access lasts to the period end (card: cancel at period end; wallet: suspend billing). */
  scheduleCancel(ref: string): Promise<void>;
  /** Undoes scheduleCancel (card: resume; wallet: re-activate). */
  undoScheduledCancel(ref: string): Promise<void>;
  /** At the period end of a scheduled cancellation (card: the provider ends it itself; wallet: cancel). */
  finishScheduledCancel(ref: string): Promise<void>;
  /** The product's plan reference at this provider (card price id, wallet plan id). */
  planRef(productId: number): Promise<string | null>;
  /**
   * Moves the subscription to another plan, prorated or not; chargeNow charges the prorated difference at
   * once (card: "always_invoice") and returns that payment. A wallet may return a payer approval link.
   */
  changePlan(
    ref: string,
    plan: { planRef: string; productId: number },
    opts: { prorate: boolean; chargeNow?: boolean },
  ): Promise<{ approvalUrl: string | null; charged: ChargedPayment | null }>;
  /**
   * The payment a refund of this subscription goes back to: the one recorded on the order, else the
   * provider's latest payment of the subscription (a subscription checkout records none). Throws
   * BillingUnavailableError when there is none.
   */
  paymentFor(orderItemId: number, ref: string, invoiceId?: string | null): Promise<PaymentRef>;
  /** The refundable payment a recorded payment reference names. */
  paymentRef(reference: string): PaymentRef;
  /** Refunds `amount` minor units of `payment`. */
  refund(orderItemId: number, payment: PaymentRef, amount: number, currency: string): Promise<void>;
}

/** A refundable payment: a card payment intent or charge, or a wallet capture. */
export type PaymentRef = { paymentIntentId: string | null; chargeId: string | null } | { captureId: string };

/** A payment a plan change charged: its invoice, amount (minor units) and refundable reference. */
export interface ChargedPayment {
  invoiceId: string | null;
  amount: number;
  currency: string | null;
  reference: string | null;
}

/** The recorded reference of a refundable payment (what sbp_payment_reference keeps). */
export const paymentReferenceOf = (p: PaymentRef): string | null => ('captureId' in p ? p.captureId : (p.paymentIntentId ?? p.chargeId));

/** The provider failed or is not configured: nothing was changed, the request may be retried. */
export class BillingUnavailableError extends Error {}

export function providerFailure(source: WebBilledSource, e: unknown): ApiError {
  const who = source === 'card_processor' ? 'The card processor' : 'The wallet provider';
  const detail = e instanceof BillingUnavailableError ? ` (${e.message})` : '';
  return new ApiError(502, 'ActionError', `${who} could not carry out the change${detail}; nothing was changed. Please try again later.`, {
    data: { reason: 'provider_unavailable', payment_source: source },
  });
}

async function productRef(db: Kysely<DB>, productId: number, column: 'pro_card_price_id' | 'pro_wallet_plan_id'): Promise<string | null> {
  const row = await db.selectFrom('pro_products').select(column).where('pro_product_id', '=', productId).executeTakeFirst();
  return (row?.[column] as string | null | undefined) ?? null;
}

async function orderPayment(db: Kysely<DB>, orderItemId: number) {
  return db
    .selectFrom('odi_order_items')
    .innerJoin('ord_orders', 'ord_order_id', 'odi_ord_order_id')
    .select(['ord_stripe_charge_id', 'ord_stripe_payment_intent_id', 'ord_paypal_order_id', 'ord_order_id', 'odi_usr_user_id', 'odi_pro_product_id'])
    .where('odi_order_item_id', '=', orderItemId)
    .executeTakeFirst();
}

function cardBilling(db: Kysely<DB>, settings: Settings): PlanBilling {
  const client = () => StripeCardProcessorClient.fromSettings(settings);
  return {
    source: 'card_processor',
    cancelNow: async (ref) => void (await client().cancel(ref, { atPeriodEnd: false })),
    scheduleCancel: async (ref) => void (await client().cancel(ref, { atPeriodEnd: true })),
    undoScheduledCancel: async (ref) => void (await client().resume(ref)),
    finishScheduledCancel: async () => {},
    planRef: (productId) => productRef(db, productId, 'pro_card_price_id'),
    async changePlan(ref, plan, opts) {
      // Renewals name the product by the subscription's metadata: it must follow the plan.
      const changed = await client().changePlan(ref, plan.planRef, {
        prorate: opts.prorate,
        ...(opts.chargeNow ? { chargeNow: true } : {}),
        metadata: { product_id: String(plan.productId) },
      });
      const inv = changed.invoice;
      return {
        approvalUrl: null,
        charged: inv ? { invoiceId: inv.invoiceId, amount: inv.amountPaid, currency: inv.currency, reference: inv.paymentIntentId ?? inv.chargeId } : null,
      };
    },
    paymentRef: (reference) => (reference.startsWith('ch_') || reference.startsWith('py_') ? { paymentIntentId: null, chargeId: reference } : { paymentIntentId: reference, chargeId: null }),
    async paymentFor(orderItemId, ref, invoiceId) {
      if (invoiceId) {
        const paid = await client().paymentOfInvoice(invoiceId);
        if (paid) return paid;
      }
      const p = await orderPayment(db, orderItemId);
      const chargeId = p?.ord_stripe_charge_id ?? null;
      const paymentIntentId = p?.ord_stripe_payment_intent_id ?? null;
      if (chargeId || paymentIntentId) return { chargeId, paymentIntentId };
      const latest = await client().latestPayment(ref);
      if (!latest) throw new BillingUnavailableError('no paid card payment of this subscription to refund');
      return latest;
    },
    async refund(orderItemId, payment, amount) {
      if ('captureId' in payment) throw new BillingUnavailableError('not a card payment');
      const p = await orderPayment(db, orderItemId);
      await client().refund({
        ...(payment.chargeId ? { chargeId: payment.chargeId } : { paymentIntentId: payment.paymentIntentId! }),
        amount,
        metadata: { order_id: String(p!.ord_order_id), user_id: String(p!.odi_usr_user_id), product_id: String(p!.odi_pro_product_id), order_item_id: String(orderItemId) },
      });
    },
  };
}

function walletBilling(db: Kysely<DB>, settings: Settings, clock: Clock): PlanBilling {
  const client = () => RestWalletProviderClient.fromSettings(settings, clock);
  return {
    source: 'wallet_provider',
    cancelNow: (ref) => client().cancel(ref, 'Cancelled by the member'),
    // The wallet provider has no cancel-at-period-end: billing is suspended, and cancelled at the period end.
    scheduleCancel: (ref) => client().suspend(ref, 'Cancellation at the end of the paid period'),
    undoScheduledCancel: (ref) => client().resume(ref, 'Reactivated by the member'),
    async finishScheduledCancel(ref) {
      // A member who cancelled in their wallet account has nothing left to cancel at the provider.
      const sub = await client().getSubscription(ref);
      if (sub.status === 'CANCELLED' || sub.status === 'EXPIRED') return;
      await client().cancel(ref, 'Paid period ended after cancellation');
    },
    planRef: (productId) => productRef(db, productId, 'pro_wallet_plan_id'),
    changePlan: async (ref, plan) => ({ ...(await client().changePlan(ref, plan.planRef)), charged: null }),
    paymentRef: (reference) => ({ captureId: reference }),
    async paymentFor(orderItemId, ref) {
      // A capture id recorded on the order (ord_paypal_order_id), else the subscription's newest completed payment.
      const p = await orderPayment(db, orderItemId);
      const captureId = p?.ord_paypal_order_id ?? (await client().latestPayment(ref, clock.now()));
      if (!captureId) throw new BillingUnavailableError('no completed wallet payment of this subscription to refund');
      return { captureId };
    },
    async refund(_orderItemId, payment, amount, currency) {
      if (!('captureId' in payment)) throw new BillingUnavailableError('not a wallet payment');
      await client().refund(payment.captureId, { value: amount, currency });
    },
  };
}

export function planBilling(source: WebBilledSource, db: Kysely<DB>, settings: Settings, clock: Clock): PlanBilling {
  return source === 'card_processor' ? cardBilling(db, settings) : walletBilling(db, settings, clock);
}

/** The provider's subscription reference of an order item (the store's reference, else the legacy columns). */
export async function subscriptionRef(db: Kysely<DB>, orderItemId: number): Promise<string | null> {
  const row = await db
    .selectFrom('odi_order_items')
    .select(['odi_subscription_reference', 'odi_stripe_subscription_id', 'odi_paypal_subscription_id'])
    .where('odi_order_item_id', '=', orderItemId)
    .executeTakeFirst();
  return row?.odi_subscription_reference ?? row?.odi_stripe_subscription_id ?? row?.odi_paypal_subscription_id ?? null;
}

/** Runs a provider call; any failure becomes the 502 that leaves our state unchanged (the transaction rolls back). */
export async function atProvider<T>(source: WebBilledSource, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw providerFailure(source, e);
  }
}
