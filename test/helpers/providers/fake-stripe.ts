import { FakeServer } from './fake-server.js';
import { stripeEvent, stripeSignature } from './stripe-signer.js';

export interface FakeSubscription {
  id: string;
  object: 'subscription';
  status: string;
  customer: string;
  cancel_at_period_end: boolean;
  current_period_start: number;
  current_period_end: number;
  metadata: Record<string, string>;
  latest_invoice: string | null;
  items: { object: 'list'; data: Array<{ id: string; object: 'subscription_item'; price: { id: string; object: 'price' }; current_period_end: number }> };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The card-processor API subset the store calls (checkout sessions, subscriptions, refunds), plus a
 * hosted payment page: GET /pay/{session} shows a "Pay" button; POST /pay/{session} sends a genuinely
 * signed checkout.session.completed to `webhook.url` and redirects to the session's success_url.
 */
export class FakeStripe extends FakeServer {
  readonly sessions = new Map<string, Record<string, any>>();
  readonly subscriptions = new Map<string, FakeSubscription>();
  readonly refunds: Array<Record<string, unknown>> = [];
  /** Customer billing portal sessions created (customer, return_url). */
  readonly portalSessions: Array<{ id: string; customer: string; return_url: string; url: string }> = [];
  /** Invoice payments by invoice id (a subscription's invoices are paid by payment intents). */
  readonly invoicePayments = new Map<string, { id: string; object: 'invoice_payment'; invoice: string; status: string; payment: { type: 'payment_intent'; payment_intent: string } }>();
  /** The subscription each invoice bills. */
  readonly invoiceSubscriptions = new Map<string, string>();
  /** What each invoice charged (minor units). */
  readonly invoiceAmounts = new Map<string, number>();
  /** Unit amounts (minor units) of the prices the fake knows: proration is computed from them. */
  readonly prices = new Map<string, number>();
  /**
   * Payments the fake knows (payment intent or charge id): a refund of more than is left of one is refused
   * as the processor refuses it; a payment the fake does not know is refunded as asked.
   */
  readonly payments = new Map<string, { amount: number; refunded: number }>();
  /** Proration items left for the next invoice ("create_prorations"), per subscription. */
  readonly pendingInvoiceItems: Array<{ subscription: string; amount: number }> = [];
  /** When set, refunds answer this error (a processor that refuses). */
  refuseRefunds: { status: number; code: string; message: string } | null = null;
  /** When set, cancelling a subscription answers this error. */
  refuseCancels: { status: number; code: string; message: string } | null = null;
  /** Where the Pay button delivers the webhook, and the endpoint secret it signs with. */
  webhook: { url: string; secret: string } | null = null;
  /** Seconds; the provider's clock for created/period times (tests align it with the app clock). */
  now = () => Math.floor(Date.now() / 1000);
  readonly deliveries: Array<{ status: number; body: string }> = [];
  private n = 0;

  constructor() {
    super();
    this.route('POST /v1/checkout/sessions', (req) => {
      const b = req.body as Record<string, any>;
      const id = `cs_test_${++this.n}`;
      const session = {
        id,
        object: 'checkout.session',
        mode: b.mode,
        url: `${this.base}/pay/${id}`,
        // As the provider does: the session id replaces the {CHECKOUT_SESSION_ID} placeholder.
        success_url: typeof b.success_url === 'string' ? b.success_url.replace('{CHECKOUT_SESSION_ID}', id) : b.success_url,
        cancel_url: b.cancel_url,
        metadata: b.metadata ?? {},
        line_items: b.line_items ?? [],
        subscription_data: b.subscription_data ?? null,
        payment_intent: b.mode === 'payment' ? `pi_test_${this.n}` : null,
        subscription: null as string | null,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: null as number | null,
        currency: 'usd',
        created: this.now(),
      };
      this.sessions.set(id, session);
      return { json: session };
    });
    this.route('GET /pay/:id', (req) => {
      const s = this.sessions.get(req.params.id!);
      if (!s) return { status: 404, html: '<p>No such session</p>' };
      return {
        html: `<!doctype html><html><head><title>Pay</title></head><body><h1>Test payment</h1>
<form method="post" action="/pay/${escapeHtml(s.id)}"><button type="submit">Pay</button></form></body></html>`,
      };
    });
    this.route('POST /pay/:id', async (req) => {
      const s = this.sessions.get(req.params.id!);
      if (!s) return { status: 404, html: '<p>No such session</p>' };
      await this.complete(s.id);
      return { status: 303, headers: { location: s.success_url }, text: '' };
    });
    this.route('GET /v1/subscriptions', (req) => {
      // As the processor lists them: a customer's subscriptions, ended (canceled) ones left out by default.
      const customer = req.query.get('customer');
      const data = [...this.subscriptions.values()].filter((s) => (!customer || s.customer === customer) && s.status !== 'canceled');
      return { json: { object: 'list', url: '/v1/subscriptions', has_more: false, data } };
    });
    this.route('GET /v1/subscriptions/:id', (req) => this.subscriptionResponse(req.params.id!));
    this.route('POST /v1/subscriptions/:id', (req) => {
      const sub = this.subscriptions.get(req.params.id!);
      if (!sub) return this.missing(req.params.id!);
      const b = req.body as Record<string, any>;
      if (b.cancel_at_period_end !== undefined) sub.cancel_at_period_end = b.cancel_at_period_end === 'true';
      if (Array.isArray(b.items)) {
        for (const it of b.items) {
          const item = sub.items.data.find((d) => d.id === it.id);
          if (!item || !it.price) continue;
          const proration = this.proration(sub, item.price.id, it.price);
          item.price = { id: it.price, object: 'price' };
          // The processor's proration behaviours: always_invoice invoices and charges the difference now;
          // create_prorations (the default) leaves it as pending items for the next invoice; none drops it.
          const behaviour = b.proration_behavior ?? 'create_prorations';
          if (proration !== 0 && behaviour === 'create_prorations') this.pendingInvoiceItems.push({ subscription: sub.id, amount: proration });
          if (proration > 0 && behaviour === 'always_invoice') this.payInvoice(sub.id, undefined, proration);
        }
      }
      return { json: sub };
    });
    this.route('DELETE /v1/subscriptions/:id', (req) => {
      const sub = this.subscriptions.get(req.params.id!);
      if (!sub) return this.missing(req.params.id!);
      if (this.refuseCancels) return { status: this.refuseCancels.status, json: { error: { type: 'api_error', code: this.refuseCancels.code, message: this.refuseCancels.message } } };
      sub.status = 'canceled';
      return { json: sub };
    });
    this.route('GET /v1/invoice_payments', (req) => {
      const invoice = req.query.get('invoice');
      const status = req.query.get('status');
      const paymentIntent = req.query.get('payment[payment_intent]');
      const data = [...this.invoicePayments.values()].filter(
        (p) => (!invoice || p.invoice === invoice) && (!status || p.status === status) && (!paymentIntent || p.payment.payment_intent === paymentIntent),
      );
      return { json: { object: 'list', url: '/v1/invoice_payments', has_more: false, data } };
    });
    this.route('GET /v1/invoices/:id', (req) => {
      const subscription = this.invoiceSubscriptions.get(req.params.id!);
      if (!subscription) return { status: 404, json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such invoice: '${req.params.id}'` } } };
      return {
        json: {
          id: req.params.id,
          object: 'invoice',
          status: 'paid',
          currency: 'usd',
          amount_paid: this.invoiceAmounts.get(req.params.id!) ?? 0,
          parent: { type: 'subscription_details', subscription_details: { subscription } },
        },
      };
    });
    this.route('POST /v1/billing_portal/sessions', (req) => {
      const b = req.body as Record<string, any>;
      const id = `bps_test_${++this.n}`;
      const session = { id, object: 'billing_portal.session', customer: String(b.customer), return_url: String(b.return_url), url: `${this.base}/portal/${id}`, livemode: false, created: this.now() };
      this.portalSessions.push(session);
      return { json: session };
    });
    this.route('POST /v1/refunds', (req) => {
      const b = req.body as Record<string, any>;
      if (this.refuseRefunds) return { status: this.refuseRefunds.status, json: { error: { type: 'invalid_request_error', code: this.refuseRefunds.code, message: this.refuseRefunds.message } } };
      const paid = this.payments.get(b.payment_intent ?? b.charge);
      if (paid) {
        const amount = b.amount ? Number(b.amount) : paid.amount - paid.refunded;
        if (amount > paid.amount - paid.refunded) {
          const left = ((paid.amount - paid.refunded) / 100).toFixed(2);
          return { status: 400, json: { error: { type: 'invalid_request_error', code: 'amount_too_large', message: `Refund amount ($${(amount / 100).toFixed(2)}) is greater than unrefunded amount on charge ($${left})` } } };
        }
        paid.refunded += amount;
      }
      const refund = { id: `re_test_${++this.n}`, object: 'refund', amount: b.amount ? Number(b.amount) : 1000, status: 'succeeded', payment_intent: b.payment_intent ?? null, charge: b.charge ?? null, metadata: b.metadata ?? {} };
      this.refunds.push(refund);
      return { json: refund };
    });
  }

  /** Adds a subscription the fake knows about (as if created by a checkout). */
  addSubscription(id: string, priceId: string, periodEnd: number, metadata: Record<string, string> = {}, periodStart = periodEnd - 30 * 86400): FakeSubscription {
    const sub: FakeSubscription = {
      id,
      object: 'subscription',
      status: 'active',
      customer: `cus_${id}`,
      cancel_at_period_end: false,
      current_period_start: periodStart,
      current_period_end: periodEnd,
      metadata,
      latest_invoice: null,
      items: { object: 'list', data: [{ id: `si_${id}`, object: 'subscription_item', price: { id: priceId, object: 'price' }, current_period_end: periodEnd }] },
    };
    this.subscriptions.set(id, sub);
    return sub;
  }

  /**
   * The processor's proration of a price change now: credit for the unused time on the old price, charge
   * for it on the new one, each to the second and rounded to the minor unit.
   */
  proration(sub: FakeSubscription, fromPrice: string, toPrice: string): number {
    const from = this.prices.get(fromPrice);
    const to = this.prices.get(toPrice);
    const length = sub.current_period_end - sub.current_period_start;
    const left = sub.current_period_end - this.now();
    if (from === undefined || to === undefined || length <= 0 || left <= 0) return 0;
    return Math.round((to * left) / length) - Math.round((from * left) / length);
  }

  /** Records a paid invoice of the subscription (now its latest), paid by `paymentIntentId`, of `amount` when given. */
  payInvoice(subscriptionId: string, paymentIntentId = `pi_test_${++this.n}`, amount?: number): string {
    const sub = this.subscriptions.get(subscriptionId)!;
    const invoice = `in_test_${++this.n}`;
    sub.latest_invoice = invoice;
    this.invoiceSubscriptions.set(invoice, subscriptionId);
    if (amount !== undefined) {
      this.invoiceAmounts.set(invoice, amount);
      this.payments.set(paymentIntentId, { amount, refunded: 0 });
    }
    this.invoicePayments.set(invoice, { id: `inpay_test_${this.n}`, object: 'invoice_payment', invoice, status: 'paid', payment: { type: 'payment_intent', payment_intent: paymentIntentId } });
    return invoice;
  }

  /** Pays the session: marks it complete and delivers the signed checkout.session.completed webhook. */
  complete(sessionId: string): Promise<{ status: number; body: string }> {
    return this.finish(sessionId, 'paid');
  }

  /**
   * A delayed payment method (a bank debit): the session completes with payment_status unpaid, then
   * settle() reports the payment's outcome (async_payment_succeeded or _failed), as the provider does.
   */
  completeDelayed(sessionId: string): Promise<{ status: number; body: string }> {
    return this.finish(sessionId, 'unpaid');
  }

  private finish(sessionId: string, paymentStatus: 'paid' | 'unpaid'): Promise<{ status: number; body: string }> {
    const s = this.sessions.get(sessionId)!;
    s.status = 'complete';
    s.payment_status = paymentStatus;
    this.startSubscription(s);
    return this.deliver('checkout.session.completed', s);
  }

  async settle(sessionId: string, succeeded: boolean, o: { created?: number } = {}): Promise<{ status: number; body: string }> {
    const s = this.sessions.get(sessionId)!;
    s.payment_status = succeeded ? 'paid' : 'unpaid';
    return this.deliver(succeeded ? 'checkout.session.async_payment_succeeded' : 'checkout.session.async_payment_failed', s, o);
  }

  private startSubscription(s: Record<string, any>): void {
    if (s.mode !== 'subscription' || s.subscription) return;
    s.subscription = `sub_test_${++this.n}`;
    const price = (s.line_items as Array<{ price?: string }>)[0]?.price ?? 'price_unknown';
    this.addSubscription(s.subscription, price, this.now() + 30 * 86400, s.metadata);
    s.invoice = this.payInvoice(s.subscription);
  }

  /** Delivers a genuinely signed event about `object` (created now unless given, in seconds) to the configured webhook URL. */
  async deliver(type: string, object: Record<string, any>, o: { created?: number } = {}): Promise<{ status: number; body: string }> {
    if (!this.webhook) throw new Error('FakeStripe.webhook is not configured');
    const event = stripeEvent(type, object, { created: o.created ?? this.now() });
    const payload = JSON.stringify(event);
    const res = await fetch(this.webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(payload, this.webhook.secret, this.now()) },
      body: payload,
    });
    const delivery = { status: res.status, body: await res.text() };
    this.deliveries.push(delivery);
    return delivery;
  }

  private subscriptionResponse(id: string) {
    const sub = this.subscriptions.get(id);
    return sub ? { json: sub } : this.missing(id);
  }

  private missing(id: string) {
    return { status: 404, json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such subscription: '${id}'` } } };
  }
}
