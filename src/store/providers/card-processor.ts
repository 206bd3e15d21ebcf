import type Stripe from 'stripe';
import type { Settings } from '../../settings/store.js';

/** A card-processor subscription as the store needs it (Stripe protocol). */
export interface CardSubscription {
  id: string;
  status: string;
  cancelAtPeriodEnd: boolean;
  /** End of the paid period; null when the provider reports none. */
  currentPeriodEnd: Date | null;
  /** The subscription item carrying the price (needed to change plan). */
  itemId: string | null;
  priceId: string | null;
  latestInvoiceId: string | null;
}

export interface CardRefund {
  id: string;
  /** Minor units. */
  amount: number;
  status: string | null;
}

/** A card payment, named by its payment intent or (for a payment without one) its charge. */
export interface CardPayment {
  paymentIntentId: string | null;
  chargeId: string | null;
}

/** A paid invoice: what it charged (minor units) and the payment that paid it. */
export interface CardInvoicePayment extends CardPayment {
  invoiceId: string;
  amountPaid: number;
  currency: string | null;
}

export interface CheckoutSessionRequest {
  mode: 'payment' | 'subscription';
  lineItems: Array<{ price: string; quantity: number } | { name: string; unitAmount: number; currency: string; quantity: number }>;
  metadata: Record<string, string>;
  successUrl: string;
  cancelUrl: string;
  customerEmail?: string;
}

/**
 * Outbound calls to the card processor, through the official stripe SDK. The host comes from the
 * setting card_processor_api_base (empty: the provider's own), the key from card_processor_api_key.
 * Every method throws on a provider error; nothing here touches our database.
 */
export interface CardProcessorClient {
  createCheckoutSession(req: CheckoutSessionRequest): Promise<{ id: string; url: string; paymentIntentId: string | null }>;
  getSubscription(subscriptionId: string): Promise<CardSubscription>;
  /** atPeriodEnd true: the subscription stays until its period ends; false: cancelled now. */
  cancel(subscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<CardSubscription>;
  /** Undoes a scheduled cancellation (cancel_at_period_end false). */
  resume(subscriptionId: string): Promise<CardSubscription>;
  /**
   * Moves the subscription to another price; prorate creates prorations, else none; chargeNow (with
   * prorate) invoices and charges the prorated difference at once (the processor's "always_invoice"),
   * and the paid invoice is returned. metadata (e.g. the new product_id, so renewals name the new
   * product) is merged into the subscription's metadata.
   */
  changePlan(
    subscriptionId: string,
    priceId: string,
    opts: { prorate: boolean; chargeNow?: boolean; metadata?: Record<string, string> },
  ): Promise<CardSubscription & { invoice: CardInvoicePayment | null }>;
  /** The payment of a paid invoice; null when it has none. */
  paymentOfInvoice(invoiceId: string): Promise<CardPayment | null>;
  /**
   * The payment of the subscription's latest invoice, when it is paid: what the current period was paid
   * with (a subscription checkout has no payment intent of its own). null when there is none.
   */
  latestPayment(subscriptionId: string): Promise<CardPayment | null>;
  /** Refunds a payment (by payment intent or charge); amount in minor units, omitted: the whole payment. */
  refund(req: { paymentIntentId?: string; chargeId?: string; amount?: number; metadata?: Record<string, string> }): Promise<CardRefund>;
  /**
   * The subscription a payment paid for, through its invoice (named, else found by the payment intent
   * among invoice payments); null when the payment paid no subscription's invoice.
   */
  subscriptionOfPayment(p: { invoiceId: string | null; paymentIntentId: string | null }): Promise<{ subscriptionId: string; invoiceId: string } | null>;
  /**
   * A customer billing portal session for the customer the subscription bills (where a member updates
   * the card a failed renewal was charged to); its URL, which returns to `returnUrl`.
   */
  billingPortalUrl(subscriptionId: string, returnUrl: string): Promise<string>;
  /** Every subscription of the customer that has not ended (the processor's default list: canceled ones left out). */
  customerSubscriptions(customerId: string): Promise<CustomerSubscription[]>;
}

/** A customer's subscription, with the metadata our checkout put on it (user_id, product_id). */
export interface CustomerSubscription extends CardSubscription {
  metadata: Record<string, string>;
}

function stripeConfig(base: string): Stripe.StripeConfig {
  const config: Stripe.StripeConfig = { maxNetworkRetries: 0, timeout: 20_000, telemetry: false };
  if (base) {
    const url = new URL(base);
    config.host = url.hostname;
    config.protocol = url.protocol === 'http:' ? 'http' : 'https';
    if (url.port) config.port = Number(url.port);
  }
  return config;
}

const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === 'string' ? v : (v?.id ?? null));

function toSubscription(s: Stripe.Subscription): CardSubscription {
  const item = s.items?.data?.[0];
  const raw = s as unknown as { current_period_end?: number };
  const end = raw.current_period_end ?? (item as unknown as { current_period_end?: number } | undefined)?.current_period_end;
  return {
    id: s.id,
    status: s.status,
    cancelAtPeriodEnd: Boolean(s.cancel_at_period_end),
    currentPeriodEnd: typeof end === 'number' ? new Date(end * 1000) : null,
    itemId: item?.id ?? null,
    priceId: item?.price?.id ?? null,
    latestInvoiceId: idOf(s.latest_invoice),
  };
}

export class StripeCardProcessorClient implements CardProcessorClient {
  /** The SDK client, made once its module has loaded (it is loaded at the first call, not at start). */
  private readonly stripe: Promise<Stripe>;

  constructor(apiKey: string, apiBase: string) {
    if (!apiKey) throw new Error('card_processor_api_key is not set');
    this.stripe = import('stripe').then(({ default: StripeSdk }) => new StripeSdk(apiKey, stripeConfig(apiBase)));
  }

  static fromSettings(settings: Settings): StripeCardProcessorClient {
    return new StripeCardProcessorClient(settings.string('card_processor_api_key'), settings.string('card_processor_api_base'));
  }

  async createCheckoutSession(req: CheckoutSessionRequest) {
    const session = await (await this.stripe).checkout.sessions.create({
      mode: req.mode,
      line_items: req.lineItems.map((l) =>
        'price' in l
          ? { price: l.price, quantity: l.quantity }
          : { quantity: l.quantity, price_data: { currency: l.currency, unit_amount: l.unitAmount, product_data: { name: l.name } } },
      ),
      metadata: req.metadata,
      // Renewals and refunds name the same user and product: the metadata travels to what the session creates.
      ...(req.mode === 'subscription' ? { subscription_data: { metadata: req.metadata } } : { payment_intent_data: { metadata: req.metadata } }),
      success_url: req.successUrl,
      cancel_url: req.cancelUrl,
      ...(req.customerEmail ? { customer_email: req.customerEmail } : {}),
    });
    if (!session.url) throw new Error('The card processor returned a checkout session without a url');
    const pi = session.payment_intent;
    return { id: session.id, url: session.url, paymentIntentId: typeof pi === 'string' ? pi : (pi?.id ?? null) };
  }

  async getSubscription(subscriptionId: string) {
    return toSubscription(await (await this.stripe).subscriptions.retrieve(subscriptionId));
  }

  async cancel(subscriptionId: string, opts: { atPeriodEnd: boolean }) {
    if (opts.atPeriodEnd) return toSubscription(await (await this.stripe).subscriptions.update(subscriptionId, { cancel_at_period_end: true }));
    return toSubscription(await (await this.stripe).subscriptions.cancel(subscriptionId));
  }

  async resume(subscriptionId: string) {
    return toSubscription(await (await this.stripe).subscriptions.update(subscriptionId, { cancel_at_period_end: false }));
  }

  async changePlan(subscriptionId: string, priceId: string, opts: { prorate: boolean; chargeNow?: boolean; metadata?: Record<string, string> }) {
    const current = await this.getSubscription(subscriptionId);
    if (!current.itemId) throw new Error(`Subscription ${subscriptionId} has no item to change`);
    const chargeNow = opts.prorate && opts.chargeNow === true;
    const updated = await (await this.stripe).subscriptions.update(subscriptionId, {
      items: [{ id: current.itemId, price: priceId }],
      proration_behavior: !opts.prorate ? 'none' : chargeNow ? 'always_invoice' : 'create_prorations',
      // A charge that fails must fail the change, not leave it applied and unpaid.
      ...(chargeNow ? { payment_behavior: 'error_if_incomplete' as const } : {}),
      cancel_at_period_end: false,
      ...(opts.metadata ? { metadata: opts.metadata } : {}),
    });
    // The invoice the change created: the subscription's latest, when it is a new one (a change that costs
    // nothing creates none).
    const invoiceId = chargeNow ? idOf(updated.latest_invoice) : null;
    const invoice = invoiceId !== null && invoiceId !== current.latestInvoiceId ? await this.paidInvoice(invoiceId) : null;
    return { ...toSubscription(updated), invoice };
  }

  private async paidInvoice(invoiceId: string): Promise<CardInvoicePayment | null> {
    const invoice = await (await this.stripe).invoices.retrieve(invoiceId);
    if (invoice.status !== 'paid' || !invoice.amount_paid) return null;
    const payment = await this.paymentOfInvoice(invoiceId);
    return { invoiceId, amountPaid: invoice.amount_paid, currency: invoice.currency ?? null, paymentIntentId: payment?.paymentIntentId ?? null, chargeId: payment?.chargeId ?? null };
  }

  async latestPayment(subscriptionId: string): Promise<CardPayment | null> {
    const sub = await (await this.stripe).subscriptions.retrieve(subscriptionId);
    const invoice = idOf(sub.latest_invoice);
    if (!invoice) return null;
    return this.paymentOfInvoice(invoice);
  }

  async paymentOfInvoice(invoice: string): Promise<CardPayment | null> {
    const payments = await (await this.stripe).invoicePayments.list({ invoice, status: 'paid', limit: 1 });
    const payment = payments.data[0]?.payment;
    const paymentIntentId = idOf(payment?.payment_intent);
    const chargeId = idOf(payment?.charge);
    return paymentIntentId || chargeId ? { paymentIntentId, chargeId } : null;
  }

  async subscriptionOfPayment(p: { invoiceId: string | null; paymentIntentId: string | null }) {
    let invoiceId = p.invoiceId;
    if (!invoiceId && p.paymentIntentId) {
      const payments = await (await this.stripe).invoicePayments.list({ payment: { type: 'payment_intent', payment_intent: p.paymentIntentId }, limit: 1 });
      invoiceId = idOf(payments.data[0]?.invoice);
    }
    if (!invoiceId) return null;
    const invoice = await (await this.stripe).invoices.retrieve(invoiceId);
    // Older API versions name the subscription on the invoice itself.
    const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription;
    const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(legacy);
    return subscriptionId ? { subscriptionId, invoiceId } : null;
  }

  async billingPortalUrl(subscriptionId: string, returnUrl: string): Promise<string> {
    const sub = await (await this.stripe).subscriptions.retrieve(subscriptionId);
    const customer = idOf(sub.customer as string | { id: string } | null);
    if (!customer) throw new Error(`Subscription ${subscriptionId} names no customer`);
    const session = await (await this.stripe).billingPortal.sessions.create({ customer, return_url: returnUrl });
    return session.url;
  }

  async customerSubscriptions(customerId: string): Promise<CustomerSubscription[]> {
    const out: CustomerSubscription[] = [];
    for await (const s of (await this.stripe).subscriptions.list({ customer: customerId, limit: 100 })) {
      out.push({ ...toSubscription(s), metadata: { ...(s.metadata ?? {}) } });
    }
    return out;
  }

  async refund(req: { paymentIntentId?: string; chargeId?: string; amount?: number; metadata?: Record<string, string> }) {
    if (!req.paymentIntentId && !req.chargeId) throw new Error('A refund needs a payment intent or a charge');
    const refund = await (await this.stripe).refunds.create({
      ...(req.paymentIntentId ? { payment_intent: req.paymentIntentId } : { charge: req.chargeId! }),
      ...(req.amount !== undefined ? { amount: req.amount } : {}),
      ...(req.metadata ? { metadata: req.metadata } : {}),
    });
    return { id: refund.id, amount: refund.amount, status: refund.status ?? null };
  }
}
