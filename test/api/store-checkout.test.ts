import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../src/http/errors.js';
import { createCheckout } from '../../src/store/checkout.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listenLocally, startCardCheckout } from '../helpers/card-checkout.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { createProduct, setStoreActive } from '../helpers/store.js';
import { createTier, tierMemberships, type TestTier } from '../helpers/tiers.js';

let t: TestApp;
let baseUrl: string;
let stripe: FakeStripe;
let gold: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  baseUrl = await listenLocally(t);
  stripe = await startCardCheckout(t, baseUrl, 'sk_test_checkout');
  gold = await createTier(t, { name: 'gold', level: 30 });
});
afterAll(async () => {
  await stripe.stop();
  await t.close();
});

const urls = { successUrl: 'https://shop.example/thanks', cancelUrl: 'https://shop.example/cart' };
const checkout = (userId: number, lines: Array<{ product_id: number; quantity: number }>) => createCheckout(t.services.db, t.services, userId, lines, urls);
const order = (orderId: number) => t.services.db.selectFrom('ord_orders').selectAll().where('ord_order_id', '=', orderId).executeTakeFirstOrThrow();
const items = (orderId: number) => t.services.db.selectFrom('odi_order_items').selectAll().where('odi_ord_order_id', '=', orderId).orderBy('odi_order_item_id').execute();

async function pay(url: string) {
  const page = await fetch(url);
  const html = await page.text();
  expect(html).toMatch(/<button[^>]*>Pay<\/button>/);
  const action = html.match(/action="([^"]+)"/)![1]!;
  return fetch(new URL(action, url), { method: 'POST', redirect: 'manual' });
}

describe('card processor checkout', () => {
  it('a tier subscription: pending order, subscription-mode session with metadata; paying completes that order and grants the tier', async () => {
    const userId = (await t.createUser()).userId;
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: 'price_gold_monthly' }, price: 2500 });
    const { orderId, url } = await checkout(userId, [{ product_id: productId, quantity: 1 }]);
    expect(url.startsWith(`${stripe.base}/pay/`)).toBe(true);
    const pending = await order(orderId);
    expect(pending).toMatchObject({ ord_status: 1, ord_usr_user_id: userId, ord_total_cost: 2500, ord_currency: 'usd', ord_payment_source: 'card_processor' });
    expect(pending.ord_stripe_session_id).toMatch(/^cs_test_/);
    expect(await items(orderId)).toEqual([expect.objectContaining({ odi_pro_product_id: productId, odi_price: 2500, odi_usr_user_id: userId, odi_status: 1 })]);
    const created = stripe.callsTo('POST', '/v1/checkout/sessions').at(-1)!;
    expect(created.headers.authorization).toBe('Bearer sk_test_checkout');
    expect(created.body).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: 'price_gold_monthly', quantity: '1' }],
      metadata: { user_id: String(userId), product_id: String(productId), order_id: String(orderId) },
      subscription_data: { metadata: { order_id: String(orderId) } },
      success_url: urls.successUrl,
      cancel_url: urls.cancelUrl,
    });

    const paid = await pay(url);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(urls.successUrl);
    expect(stripe.deliveries.at(-1)!.status).toBe(200);
    expect(await order(orderId)).toMatchObject({ ord_status: 2 });
    const [item] = await items(orderId);
    expect(item).toMatchObject({ odi_status: 2, odi_payment_source: 'card_processor', odi_subscription_status: 'active' });
    expect(item!.odi_subscription_reference).toMatch(/^sub_test_/);
    expect(item!.odi_stripe_subscription_id).toBe(item!.odi_subscription_reference);
    // The period end is read back from the provider's subscription.
    const sub = stripe.subscriptions.get(item!.odi_subscription_reference!)!;
    expect(item!.odi_subscription_period_end).toEqual(new Date(sub.current_period_end * 1000));
    expect(stripe.callsTo('GET', `/v1/subscriptions/${sub.id}`)).toHaveLength(1);
    expect((await tierMemberships(t, userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([gold.tierId]);
    const orders = await t.services.db.selectFrom('ord_orders').select('ord_order_id').where('ord_usr_user_id', '=', userId).execute();
    expect(orders).toHaveLength(1);
  });

  it('a subscription bought through checkout is cancelled immediately with a prorated refund of the payment the provider holds', async () => {
    const { headers, userId } = await t.keyHeaders();
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: 'price_gold_refundable' }, price: 3000 });
    const { orderId, url } = await checkout(userId, [{ product_id: productId, quantity: 1 }]);
    expect((await pay(url)).status).toBe(303);
    const [item] = await items(orderId);
    const sub = stripe.subscriptions.get(item!.odi_subscription_reference!)!;
    // Nothing of the payment is recorded here: a subscription session has no payment intent of its own.
    expect((await order(orderId)).ord_stripe_payment_intent_id).toBeNull();
    const paidWith = stripe.invoicePayments.get(sub.latest_invoice!)!.payment.payment_intent;
    await t.services.settings.set('subscription_cancellation_timing', 'immediate');
    await t.services.settings.set('subscription_cancellation_prorate', true);
    try {
      t.clock.advanceSeconds(10 * 86_400); // 20 of the 30 paid days unused
      const res = await t.request({ method: 'POST', url: '/api/v1/action/orders_recurring_action', headers, payload: { order_item_id: item!.odi_order_item_id, recurring_action: 'cancel' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json.data).toMatchObject({ status: 'refunded', timing: 'immediate', refund_amount: 2000 });
      expect(sub.status).toBe('canceled');
      expect(stripe.callsTo('POST', '/v1/refunds').at(-1)!.body).toMatchObject({ payment_intent: paidWith, amount: '2000' });
      expect(await tierMemberships(t, userId)).toEqual([]);
    } finally {
      await t.services.settings.set('subscription_cancellation_timing', 'end_of_period');
      await t.services.settings.set('subscription_cancellation_prorate', false);
    }
  });

  it('one-time products: payment mode with inline prices in minor units, one item per unit', async () => {
    const userId = (await t.createUser()).userId;
    const mug = await createProduct(t, { tierId: null, price: 1250, name: 'Mug' });
    const { orderId, url } = await checkout(userId, [{ product_id: mug, quantity: 2 }]);
    expect(await order(orderId)).toMatchObject({ ord_total_cost: 2500, ord_status: 1 });
    expect((await items(orderId)).map((i) => i.odi_price)).toEqual([1250, 1250]);
    expect(stripe.callsTo('POST', '/v1/checkout/sessions').at(-1)!.body).toMatchObject({
      mode: 'payment',
      line_items: [{ quantity: '2', price_data: { currency: 'usd', unit_amount: '1250', product_data: { name: 'Mug' } } }],
      payment_intent_data: { metadata: { order_id: String(orderId) } },
    });
    expect((await pay(url)).status).toBe(303);
    expect(await order(orderId)).toMatchObject({ ord_status: 2 });
    expect((await items(orderId)).map((i) => [i.odi_status, i.odi_payment_source])).toEqual([
      [2, 'card_processor'],
      [2, 'card_processor'],
    ]);
    expect(await tierMemberships(t, userId)).toEqual([]);
  });

  it('refuses empty carts, unavailable or unpriced products and two subscriptions with 422, creating no order', async () => {
    const userId = (await t.createUser()).userId;
    const sub1 = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: 'price_1' } });
    const sub2 = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: 'price_2' } });
    const hidden = await createProduct(t, { tierId: null });
    await t.services.db.updateTable('pro_products').set({ pro_is_active: false }).where('pro_product_id', '=', hidden).execute();
    const unpriced = await createProduct(t, { tierId: null });
    await t.services.db.updateTable('pro_products').set({ pro_price: null }).where('pro_product_id', '=', unpriced).execute();
    for (const lines of [[], [{ product_id: hidden, quantity: 1 }], [{ product_id: unpriced, quantity: 1 }], [{ product_id: sub1, quantity: 1 }, { product_id: sub2, quantity: 1 }], [{ product_id: sub1, quantity: 2 }], [{ product_id: 999999, quantity: 1 }]]) {
      const err = await checkout(userId, lines).catch((e: unknown) => e);
      expect(isApiError(err) && err.status === 422 && err.errortype === 'ActionError', JSON.stringify(lines)).toBe(true);
    }
    expect(await t.services.db.selectFrom('ord_orders').select('ord_order_id').where('ord_usr_user_id', '=', userId).execute()).toEqual([]);
  });

  it('with the store inactive no checkout starts', async () => {
    const userId = (await t.createUser()).userId;
    const p = await createProduct(t, { tierId: null });
    await setStoreActive(t, false);
    try {
      const err = await checkout(userId, [{ product_id: p, quantity: 1 }]).catch((e: unknown) => e);
      expect(isApiError(err) && err.status === 422).toBe(true);
    } finally {
      await setStoreActive(t, true);
    }
  });

  it('a provider failure marks the pending order failed and is rethrown', async () => {
    const userId = (await t.createUser()).userId;
    const p = await createProduct(t, { tierId: null });
    await t.services.settings.set('card_processor_api_base', 'http://127.0.0.1:9');
    try {
      await expect(checkout(userId, [{ product_id: p, quantity: 1 }])).rejects.toThrow();
    } finally {
      await t.services.settings.set('card_processor_api_base', stripe.base);
    }
    const [o] = await t.services.db.selectFrom('ord_orders').selectAll().where('ord_usr_user_id', '=', userId).execute();
    expect(o).toMatchObject({ ord_status: 3, ord_stripe_session_id: null });
    expect(o!.ord_error).toBeTruthy();
  });
});
