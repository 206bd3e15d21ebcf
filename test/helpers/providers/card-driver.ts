import type { TestApp } from '../app.js';
import type { Delivery, ProviderFact, SourceDriver } from '../store.js';
import { stripeEvent, stripeSignature } from './stripe-signer.js';

export const CARD_WEBHOOK_SECRET = 'whsec_test_card_processor_secret';
const secs = (d: Date) => Math.floor(d.getTime() / 1000);

function sign(t: TestApp, event: object, o: { secret?: string; timestamp?: number } = {}): Delivery {
  const body = JSON.stringify(event);
  const ts = o.timestamp ?? Math.floor(t.clock.nowMs() / 1000);
  return { headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, o.secret ?? CARD_WEBHOOK_SECRET, ts) }, body };
}

const md = (f: ProviderFact) => ({ user_id: String(f.userId), product_id: String(f.productId) });

function purchaseEvent(f: ProviderFact) {
  return stripeEvent(
    'checkout.session.completed',
    { id: `cs_${f.ref}`, object: 'checkout.session', mode: 'subscription', subscription: f.ref, payment_intent: null, payment_status: 'paid', status: 'complete', amount_total: 1500, currency: 'usd', metadata: md(f) },
    { id: f.eventId, created: secs(f.at) },
  );
}

/** The card processor (Stripe protocol) in the shared webhook scenarios. */
export const cardDriver: SourceDriver = {
  source: 'card_processor',
  productColumn: 'pro_card_price_id',
  async setup(t) {
    await t.services.settings.set('card_processor_webhook_secret', CARD_WEBHOOK_SECRET);
  },
  async teardown() {},
  async purchase(t, f) {
    return sign(t, purchaseEvent(f));
  },
  async renewal(t, f) {
    return sign(
      t,
      stripeEvent(
        'invoice.paid',
        {
          id: `in_${f.ref}_${secs(f.at)}`,
          object: 'invoice',
          billing_reason: 'subscription_cycle',
          amount_paid: 1500,
          currency: 'usd',
          parent: { type: 'subscription_details', subscription_details: { subscription: f.ref, metadata: md(f) } },
          lines: { object: 'list', data: [{ id: 'il_1', period: { start: secs(f.at), end: secs(f.periodEnd) }, metadata: {} }] },
        },
        { id: f.eventId, created: secs(f.at) },
      ),
    );
  },
  async expiry(t, f) {
    return sign(t, stripeEvent('customer.subscription.deleted', { id: f.ref, object: 'subscription', status: 'canceled', metadata: md(f) }, { id: f.eventId, created: secs(f.at) }));
  },
  async refund(t, f) {
    // A subscription's charge names its invoice; the store finds the subscription by the last invoice it saw
    // or, as here, by the order our checkout recorded (metadata carried onto the payment).
    const row = await t.services.db.selectFrom('odi_order_items').select('odi_ord_order_id').where('odi_subscription_reference', '=', f.ref).executeTakeFirstOrThrow();
    return sign(
      t,
      stripeEvent(
        'charge.refunded',
        { id: `ch_${f.ref}`, object: 'charge', amount_refunded: 1500, payment_intent: `pi_${f.ref}`, refunded: true, metadata: { ...md(f), order_id: String(row.odi_ord_order_id) } },
        { id: f.eventId, created: secs(f.at) },
      ),
    );
  },
  async cancelScheduled(t, f) {
    return sign(
      t,
      stripeEvent(
        'customer.subscription.updated',
        { id: f.ref, object: 'subscription', status: 'active', cancel_at_period_end: true, current_period_end: secs(f.periodEnd), metadata: md(f) },
        { id: f.eventId, created: secs(f.at), previous: { cancel_at_period_end: false } },
      ),
    );
  },
  async cancelUndone(t, f) {
    return sign(
      t,
      stripeEvent(
        'customer.subscription.updated',
        { id: f.ref, object: 'subscription', status: 'active', cancel_at_period_end: false, current_period_end: secs(f.periodEnd), metadata: md(f) },
        { id: f.eventId, created: secs(f.at), previous: { cancel_at_period_end: true } },
      ),
    );
  },
  async badSignature(t, f) {
    return sign(t, purchaseEvent(f), { secret: 'whsec_someone_else' });
  },
  async expired(t, f) {
    return sign(t, purchaseEvent(f), { timestamp: Math.floor(t.clock.nowMs() / 1000) - 301 });
  },
  async tampered(t, f) {
    const d = sign(t, purchaseEvent(f));
    return { ...d, body: d.body.replace(`"user_id":"${f.userId}"`, `"user_id":"${f.userId + 1}"`) };
  },
  async unsigned(t, f) {
    const d = sign(t, purchaseEvent(f));
    return { headers: { 'content-type': 'application/json' }, body: d.body };
  },
};
