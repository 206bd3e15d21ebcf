import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_STATUS } from '../../src/store/orders.js';
import { STAND_IN_SOURCE_SETTINGS } from '../helpers/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';

describe('order confirmation page /order/{id}', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { products_active: true, subscriptions_active: true, ...STAND_IN_SOURCE_SETTINGS } });
  });
  afterAll(async () => t.close());

  async function product(name: string, price: number, afterPurchase: string | null = null): Promise<number> {
    const now = t.clock.now();
    const row = await (t.services.db as any)
      .insertInto('pro_products')
      .values({ pro_name: name, pro_link: `p-${Math.random().toString(36).slice(2)}`, pro_is_active: true, pro_price: price, pro_after_purchase_message: afterPurchase, pro_create_time: now, pro_update_time: now })
      .returning('pro_product_id')
      .executeTakeFirstOrThrow();
    return Number(row.pro_product_id);
  }

  async function order(userId: number, status: number, items: Array<{ productId: number; price: number }>): Promise<number> {
    const db = t.services.db as any;
    const now = t.clock.now();
    const total = items.reduce((n, i) => n + i.price, 0);
    const o = await db
      .insertInto('ord_orders')
      .values({ ord_usr_user_id: userId, ord_status: status, ord_total_cost: total, ord_currency: 'usd', ord_timestamp: now, ord_create_time: now, ord_update_time: now })
      .returning('ord_order_id')
      .executeTakeFirstOrThrow();
    for (const i of items) {
      await db
        .insertInto('odi_order_items')
        .values({ odi_ord_order_id: o.ord_order_id, odi_pro_product_id: i.productId, odi_usr_user_id: userId, odi_price: i.price, odi_currency: 'usd', odi_create_time: now, odi_update_time: now })
        .execute();
    }
    return Number(o.ord_order_id);
  }

  it('asks a visitor to sign in first', async () => {
    const res = await webClient(t).get('/order/1');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Forder%2F1');
  });

  it('a pending order says it waits for the provider and polls; nothing is taken out of the cart', async () => {
    const u = await t.createUser();
    const p = await product('Pending pass', 1500);
    const id = await order(u.userId, ORDER_STATUS.pending, [{ productId: p, price: 1500 }]);
    const web = await signIn(t, u.email, u.password);
    expect((await web.api('POST', '/api/v1/action/cart', { payload: { product_id: p } })).statusCode).toBe(200);
    const res = await web.get(`/order/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-order-status="pending"');
    expect(res.body).toContain('<strong>Waiting for payment confirmation</strong>');
    expect(res.body).toContain('<script src="/static/order.js" defer></script>');
    expect(res.body).toContain('<strong id="order-total">$15.00</strong>');
    const cart = await web.get('/cart');
    expect(cart.body).toContain(`data-product="${p}"`);
  });

  it('a paid order thanks the buyer, shows the after-purchase message and empties those products from the cart', async () => {
    const u = await t.createUser();
    const bought = await product('Gold monthly', 6000, 'Welcome to Gold!');
    const other = await product('Mug', 900);
    const id = await order(u.userId, ORDER_STATUS.paid, [{ productId: bought, price: 6000 }]);
    const web = await signIn(t, u.email, u.password);
    await web.api('POST', '/api/v1/action/cart', { payload: { product_id: bought } });
    await web.api('POST', '/api/v1/action/cart', { payload: { product_id: other } });
    const res = await web.get(`/order/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Thank you for your order</h1>');
    expect(res.body).toContain('data-order-status="paid"');
    expect(res.body).toContain(`<tr data-product="${bought}"><td>Gold monthly</td><td>$60.00</td></tr>`);
    expect(res.body).toContain('<p class="notice after-purchase">Welcome to Gold!</p>');
    const cart = await web.get('/cart');
    expect(cart.body).not.toContain(`data-product="${bought}"`);
    expect(cart.body).toContain(`data-product="${other}"`);
  });

  it('someone else’s order, an unknown one and a malformed id are the same 404; staff may look at any', async () => {
    const owner = await t.createUser();
    const p = await product('Private pass', 100);
    const id = await order(owner.userId, ORDER_STATUS.paid, [{ productId: p, price: 100 }]);
    const stranger = await t.createUser();
    const web = await signIn(t, stranger.email, stranger.password);
    for (const url of [`/order/${id}`, '/order/999999', '/order/abc']) {
      const res = await web.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).toContain('There is no such order.');
    }
    const staff = await t.createUser({ permission: 5 });
    const admin = await signIn(t, staff.email, staff.password);
    expect((await admin.get(`/order/${id}`)).statusCode).toBe(200);
  });
});
