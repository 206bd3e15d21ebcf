import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { listenLocally, startCardCheckout } from '../helpers/card-checkout.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { createProduct, setStoreActive } from '../helpers/store.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

/** The cart page's checkout: hand-off to the card processor's hosted checkout, and the way back. */
describe('cart checkout through the hosted checkout', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  let gold: TestTier;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await listenLocally(t);
    stripe = await startCardCheckout(t, baseUrl, 'sk_test_web_checkout');
    gold = await createTier(t, { name: 'gold', level: 30 });
  });
  afterAll(async () => {
    await stripe.stop();
    await t.close();
  });

  async function shopper(productId?: number): Promise<{ web: WebClient; userId: number }> {
    const u = await t.createUser();
    const web = await signIn(t, u.email, u.password);
    if (productId) expect((await web.api('POST', '/api/v1/action/cart', { payload: { product_id: productId } })).statusCode).toBe(200);
    return { web, userId: u.userId };
  }
  const checkoutToken = (web: WebClient, body: string) => web.formToken(body, '/cart/checkout');
  const orders = (userId: number) => t.services.db.selectFrom('ord_orders').selectAll().where('ord_usr_user_id', '=', userId).execute();

  it('a guest is asked to sign in, and comes back to the cart', async () => {
    const guest = webClient(t);
    const page = await guest.get('/cart');
    expect(page.statusCode).toBe(200);
    const res = await guest.postForm('/cart/checkout', { form_token: '' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fcart');
  });

  it('hands a signed-in cart to the hosted checkout, returns to the order page, and the paid order grants the tier', async () => {
    const productId = await createProduct(t, { name: 'Gold monthly', price: 2500, tierId: gold.tierId, refs: { pro_card_price_id: 'price_gold_web' } });
    const s = await shopper(productId);
    const cart = await s.web.get('/cart');
    expect(cart.body).toContain('<button class="primary" type="submit" id="checkout">Check out</button>');
    // The checkout form is redirected to the hosted checkout: the page's CSP lets it go there, and only there.
    expect(cart.headers['content-security-policy']).toContain(`form-action 'self' ${new URL(stripe.base).origin}`);
    expect((await s.web.get('/profile/subscription')).headers['content-security-policy']).toContain("form-action 'self';".slice(0, -1));
    const res = await s.web.postForm('/cart/checkout', { form_token: checkoutToken(s.web, cart.body) });
    expect(res.statusCode).toBe(303);
    const sessionId = /\/pay\/(cs_test_\d+)$/.exec(String(res.headers.location))![1]!;
    const session = stripe.sessions.get(sessionId)!;
    expect(session.mode).toBe('subscription');
    expect(session.success_url).toMatch(new RegExp(`/checkout/return\\?session_id=${sessionId}$`));
    expect(session.cancel_url).toMatch(/\/cart\?checkout=cancelled$/);
    const [pending] = await orders(s.userId);
    expect(pending!.ord_status).toBe(1);
    expect(session.metadata).toEqual({ user_id: String(s.userId), product_id: String(productId), order_id: String(pending!.ord_order_id) });

    // Before the provider confirms, the way back shows the order as waiting.
    const back = await s.web.get(`/checkout/return?session_id=${sessionId}`);
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe(`/order/${pending!.ord_order_id}`);
    expect((await s.web.get(`/order/${pending!.ord_order_id}`)).body).toContain('data-order-status="pending"');

    await stripe.complete(sessionId);
    const paid = await s.web.get(`/order/${pending!.ord_order_id}`);
    expect(paid.body).toContain('data-order-status="paid"');
    expect(paid.body).toContain('<strong id="order-total">$25.00</strong>');
    expect((await s.web.get('/cart')).body).toContain('id="cart-empty"');
    const memberships = await t.services.db.selectFrom('grm_group_members').select('grm_sbt_subscription_tier_id').where('grm_foreign_key_id', '=', s.userId).execute();
    expect(memberships.map((m) => Number(m.grm_sbt_subscription_tier_id))).toEqual([gold.tierId]);
  });

  it('shows refusals on the cart page with nothing ordered: empty cart, store closed; a stale form is 403', async () => {
    const productId = await createProduct(t, { name: 'Sticker', price: 300, tierId: null });
    const empty = await shopper();
    const page = await empty.web.get('/cart');
    expect(page.body).toContain('id="cart-empty"');
    const s = await shopper(productId);
    const cart = await s.web.get('/cart');
    expect((await s.web.postForm('/cart/checkout', { form_token: 'stale' })).statusCode).toBe(403);

    await setStoreActive(t, false);
    try {
      const closed = await s.web.get('/cart');
      expect(closed.body).toContain('id="checkout-closed"');
      const res = await s.web.postForm('/cart/checkout', { form_token: checkoutToken(s.web, cart.body) });
      expect(res.statusCode).toBe(422);
      expect(res.body).toContain('<p class="error" role="alert" id="cart-error">The store is not open</p>');
    } finally {
      await setStoreActive(t, true);
    }
    expect(await orders(s.userId)).toEqual([]);
  });

  it('the way back only finds the buyer’s own order', async () => {
    const productId = await createProduct(t, { name: 'Poster', price: 1200, tierId: null });
    const buyer = await shopper(productId);
    const cart = await buyer.web.get('/cart');
    const res = await buyer.web.postForm('/cart/checkout', { form_token: checkoutToken(buyer.web, cart.body) });
    const sessionId = /\/pay\/(cs_test_\d+)$/.exec(String(res.headers.location))![1]!;
    expect(stripe.sessions.get(sessionId)!.mode).toBe('payment');
    const other = await shopper();
    expect((await other.web.get(`/checkout/return?session_id=${sessionId}`)).statusCode).toBe(404);
    expect((await other.web.get('/checkout/return')).statusCode).toBe(404);
  });

  it('a cancelled checkout returns to the cart as it was', async () => {
    const productId = await createProduct(t, { name: 'Badge', price: 500, tierId: null });
    const s = await shopper(productId);
    const cart = await s.web.get('/cart?checkout=cancelled');
    expect(cart.body).toContain('id="cart-notice">Checkout was cancelled; your cart is as you left it.');
    expect(cart.body).toContain(`data-product="${productId}"`);
  });
});
