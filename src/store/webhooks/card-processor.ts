import type Stripe from 'stripe';
import { authError } from '../../http/errors.js';
import { graceAfter, header, intOrNull, type StoreContext, type StoreEvent, type VerifiedDelivery, type WebhookAdapter } from '../events.js';
import { findItemByPayment } from '../orders.js';

/** Seconds a Stripe-Signature timestamp may be old (the provider's own default). */
export const CARD_PROCESSOR_TOLERANCE_SECONDS = 300;

type Obj = Record<string, any>;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'object' && v !== null && typeof (v as Obj).id === 'string' ? (v as Obj).id : null);
const seconds = (v: unknown): Date | null => (typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000) : null);

function periodEndOf(sub: Obj): Date | null {
  return seconds(sub.current_period_end) ?? seconds(sub.items?.data?.[0]?.current_period_end);
}

/** What a checkout session names: its subscription (else payment intent, else itself), user, product and order. */
function checkoutEvent(kind: 'purchase' | 'payment_pending' | 'payment_failed', o: Obj, base: { source: 'card_processor'; eventTime: Date }): StoreEvent {
  const md = (o.metadata ?? {}) as Obj;
  const subscription = str(o.subscription);
  const paymentIntent = str(o.payment_intent);
  return {
    ...base,
    kind,
    reference: subscription ?? paymentIntent ?? str(o.id),
    user: { userId: intOrNull(md.user_id) },
    product: { productId: intOrNull(md.product_id) },
    orderId: intOrNull(md.order_id),
    periodEnd: null,
    amount: typeof o.amount_total === 'number' ? o.amount_total : null,
    currency: typeof o.currency === 'string' ? o.currency : null,
    // A subscription session has no payment intent of its own: its first payment is named by the invoice.
    payment: { sessionId: str(o.id), paymentIntentId: paymentIntent, invoiceId: str(o.invoice) },
  };
}

/** Whether a charge.refunded charge is refunded whole: the provider says so, else its amounts do; null when it does not tell. */
function refundedWhole(charge: Obj): boolean | null {
  if (charge.refunded === true) return true;
  if (typeof charge.amount === 'number' && typeof charge.amount_refunded === 'number') return charge.amount_refunded >= charge.amount;
  return charge.refunded === false ? false : null;
}

/**
 * A subscription's billing state as customer.subscription.updated reports it (DESIGN 14), when its status
 * or its pause_collection changed: past_due is in grace (from this event, unless a failed invoice already
 * started it), unpaid on hold, pause_collection set paused until its resumes_at; back to active, or the
 * pause lifted, a recovery.
 */
function cardBillingChange(o: Obj, previous: Obj, eventTime: Date, graceDays: number): Pick<StoreEvent, 'kind' | 'graceUntil' | 'resumeTime'> | null {
  if ('pause_collection' in previous) {
    if (o.pause_collection) return { kind: 'paused', resumeTime: seconds(o.pause_collection.resumes_at) };
    if (previous.pause_collection) return { kind: 'recovery' };
  }
  if (!('status' in previous) || previous.status === o.status) return null;
  switch (o.status) {
    case 'past_due':
      return { kind: 'in_grace', graceUntil: graceAfter(eventTime, graceDays) };
    case 'unpaid':
      return { kind: 'on_hold' };
    case 'paused':
      return { kind: 'paused', resumeTime: null };
    case 'active':
      return ['past_due', 'unpaid', 'paused'].includes(String(previous.status)) ? { kind: 'recovery' } : null;
    default:
      return null;
  }
}

/**
 * Card-processor events (DESIGN 7): checkout.session.completed is a purchase, or, while a delayed payment
 * (a bank debit) is still on its way (payment_status unpaid), a pending payment that grants nothing until
 * checkout.session.async_payment_succeeded (the purchase) or _failed (the order is cancelled);
 * invoice.paid with billing_reason subscription_cycle a renewal; customer.subscription.updated with
 * cancel_at_period_end schedules (true) or undoes (false, when it was true) a cancellation;
 * customer.subscription.deleted is an expiry; charge.refunded a refund, named by every reference the
 * charge gives (metadata.subscription_id, invoice, payment intent, metadata.order_id). Objects carry
 * metadata.user_id and metadata.product_id (our checkout sets them) and metadata.order_id for an order
 * our checkout created. Billing issues (DESIGN 14): invoice.payment_failed on a renewal puts the
 * subscription in grace for card_processor_grace_days after the failed invoice; the subscription's own
 * status changes are read by cardBillingChange; invoice.paid after a failure is a renewal, which recovers.
 */
export function normaliseCardEvent(event: Obj, graceDays = 7): StoreEvent[] {
  const o = (event.data?.object ?? {}) as Obj;
  const eventTime = new Date(Number(event.created) * 1000);
  const base = { source: 'card_processor' as const, eventTime };
  const md = (o.metadata ?? {}) as Obj;
  switch (event.type) {
    case 'checkout.session.completed':
      if (o.payment_status === 'unpaid') return [checkoutEvent('payment_pending', o, base)];
      if (o.payment_status !== undefined && o.payment_status !== 'paid' && o.payment_status !== 'no_payment_required') return [];
      return [checkoutEvent('purchase', o, base)];
    case 'checkout.session.async_payment_succeeded':
      return [checkoutEvent('purchase', o, base)];
    case 'checkout.session.async_payment_failed':
      return [checkoutEvent('payment_failed', o, base)];
    case 'invoice.paid': {
      if (o.billing_reason !== 'subscription_cycle') return [];
      const details = (o.parent?.subscription_details ?? o.subscription_details ?? {}) as Obj;
      const subscription = str(o.subscription) ?? str(details.subscription);
      const line = (o.lines?.data?.[0] ?? {}) as Obj;
      const lmd = { ...(line.metadata ?? {}), ...(details.metadata ?? {}) } as Obj;
      return [
        {
          ...base,
          kind: 'renewal',
          reference: subscription,
          user: { userId: intOrNull(lmd.user_id) },
          product: { productId: intOrNull(lmd.product_id), providerProductId: str(line.price) ?? str(line.pricing?.price_details?.price) },
          periodEnd: seconds(line.period?.end),
          amount: typeof o.amount_paid === 'number' ? o.amount_paid : null,
          currency: typeof o.currency === 'string' ? o.currency : null,
          payment: { invoiceId: str(o.id) },
        },
      ];
    }
    case 'invoice.payment_failed': {
      // A renewal's payment failed: the processor retries (Smart Retries), access is kept for the grace period.
      if (o.billing_reason !== 'subscription_cycle') return [];
      const details = (o.parent?.subscription_details ?? o.subscription_details ?? {}) as Obj;
      const lmd = { ...(o.lines?.data?.[0]?.metadata ?? {}), ...(details.metadata ?? {}) } as Obj;
      return [
        {
          ...base,
          kind: 'in_grace',
          reference: str(o.subscription) ?? str(details.subscription),
          user: { userId: intOrNull(lmd.user_id) },
          product: { productId: intOrNull(lmd.product_id) },
          periodEnd: null,
          // Grace counts from the failed invoice (every retry of it names the same one).
          graceUntil: graceAfter(seconds(o.created) ?? eventTime, graceDays),
          payment: { invoiceId: str(o.id) },
        },
      ];
    }
    case 'customer.subscription.updated': {
      const previous = (event.data?.previous_attributes ?? {}) as Obj;
      const subscription = (kind: StoreEvent['kind'], extra: Partial<StoreEvent> = {}): StoreEvent => ({
        ...base,
        kind,
        reference: str(o.id),
        user: { userId: intOrNull(md.user_id) },
        product: { productId: intOrNull(md.product_id) },
        periodEnd: periodEndOf(o),
        ...extra,
      });
      const events: StoreEvent[] = [];
      if (o.cancel_at_period_end === true || previous.cancel_at_period_end === true) {
        events.push(subscription(o.cancel_at_period_end === true ? 'cancellation_scheduled' : 'cancellation_undone'));
      }
      const billing = cardBillingChange(o, previous, eventTime, graceDays);
      if (billing) events.push(subscription(billing.kind, { ...billing, periodEnd: billing.kind === 'recovery' ? periodEndOf(o) : null }));
      return events;
    }
    case 'customer.subscription.deleted':
      return [{ ...base, kind: 'expiry', reference: str(o.id), user: { userId: intOrNull(md.user_id) }, product: { productId: intOrNull(md.product_id) }, periodEnd: periodEndOf(o) }];
    case 'charge.refunded':
      return [
        {
          ...base,
          kind: 'refund',
          reference: str(md.subscription_id),
          lookup: { orderId: intOrNull(md.order_id), paymentIntentId: str(o.payment_intent), invoiceId: str(o.invoice) },
          user: { userId: intOrNull(md.user_id) },
          product: { productId: intOrNull(md.product_id) },
          periodEnd: null,
          amount: typeof o.amount_refunded === 'number' ? o.amount_refunded : null,
          refundWhole: refundedWhole(o),
        },
      ];
    default:
      return [];
  }
}

/**
 * What only the provider's API knows, asked when card_processor_api_key is set: a new subscription's
 * paid period (not in the session), and the subscription a refunded charge paid for when nothing we
 * recorded names it (the charge of a subscription's invoice carries neither our metadata nor the
 * subscription).
 */
async function askCardProcessor(events: StoreEvent[], ctx: StoreContext): Promise<StoreEvent[]> {
  if (!ctx.settings.string('card_processor_api_key')) return events;
  const client = ctx.deps.cardProcessor(ctx.settings);
  for (const ev of events) {
    if (ev.kind === 'purchase' && ev.reference?.startsWith('sub_')) {
      ev.periodEnd = (await client.getSubscription(ev.reference)).currentPeriodEnd;
    }
    if (ev.kind === 'refund' && !ev.reference && ev.lookup && (ev.lookup.invoiceId || ev.lookup.paymentIntentId)) {
      if (await findItemByPayment(ctx.db, 'card_processor', ev.lookup, { lock: false })) continue;
      const paid = await client.subscriptionOfPayment({ invoiceId: ev.lookup.invoiceId ?? null, paymentIntentId: ev.lookup.paymentIntentId ?? null });
      if (paid) {
        ev.reference = paid.subscriptionId;
        ev.lookup.invoiceId ??= paid.invoiceId;
      }
    }
  }
  return events;
}

function cardDelivery(raw: Obj): VerifiedDelivery {
  return {
    eventId: String(raw.id),
    eventType: String(raw.type),
    eventTime: new Date(Number(raw.created) * 1000),
    payload: raw,
    acts: normaliseCardEvent(raw).length > 0,
    normalise: (c) => askCardProcessor(normaliseCardEvent(raw, c.settings.int('card_processor_grace_days')), c),
  };
}

/** Stripe-Signature verified by the official SDK with card_processor_webhook_secret (300 s tolerance). */
export const cardProcessorWebhook: WebhookAdapter = {
  source: 'card_processor',
  async verify(req, ctx) {
    const signature = header(req, 'stripe-signature');
    if (!signature) throw authError(400, 'Missing Stripe-Signature header');
    const secret = ctx.settings.string('card_processor_webhook_secret');
    if (!secret) throw authError(401, 'Card processor webhooks are not configured');
    let event: Stripe.Event;
    try {
      const { default: StripeSdk } = await import('stripe');
      event = StripeSdk.webhooks.constructEvent(req.rawBody, signature, secret, CARD_PROCESSOR_TOLERANCE_SECONDS, undefined, ctx.clock.nowMs());
    } catch {
      throw authError(401, 'Invalid card processor signature');
    }
    return cardDelivery(event as unknown as Obj);
  },
  restore: (logged) => cardDelivery(logged.payload as Obj),
};
