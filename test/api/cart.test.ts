import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { webClient } from '../helpers/browser-session.js';

describe('cart and cart_clear', () => {
  let t: TestApp;
  let products: { tee: number; mug: number; retired: number; limited: number };

  async function product(values: Record<string, unknown>): Promise<number> {
    const now = t.clock.now();
    const row = await (t.services.db as any)
      .insertInto('pro_products')
      .values({ pro_link: `p-${Math.random()}`, pro_is_active: true, pro_create_time: now, pro_update_time: now, ...values })
      .returning('pro_product_id')
      .executeTakeFirstOrThrow();
    return Number(row.pro_product_id);
  }

  beforeAll(async () => {
    t = await createTestApp();
    products = {
      tee: await product({ pro_name: 'T-shirt' }),
      mug: await product({ pro_name: 'Mug' }),
      retired: await product({ pro_name: 'Old poster', pro_is_active: false }),
      limited: await product({ pro_name: 'Signed print', pro_max_cart_count: 2 }),
    };
  });
  afterAll(async () => t.close());

  it('lets a guest add to the cart, and the cart survives sign-in', async () => {
    const { email, password } = await t.createUser();
    const c = webClient(t);
    const form = await c.get('/login');
    const add = await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.tee, quantity: 2 } });
    expect(add.statusCode).toBe(200);
    expect(add.json.data).toEqual({ items: [{ product_id: products.tee, name: 'T-shirt', link: expect.any(String), quantity: 2 }], item_count: 2 });
    expect(add.json.redirect).toBe('/cart');
    await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.mug } });
    await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.tee, quantity: '1' } });
    const signedIn = await c.postForm('/login', { email, password, form_token: c.formToken(form.body) });
    expect(signedIn.statusCode).toBe(303);
    const page = await c.get('/cart');
    expect(page.body).toMatch(new RegExp(`data-product="${products.tee}"><td class="name">T-shirt</td><td class="num unit-price" data-label="Price">[^<]*</td><td class="num quantity" data-label="Quantity">3</td>`));
    expect(page.body).toMatch(new RegExp(`data-product="${products.mug}"><td class="name">Mug</td><td class="num unit-price" data-label="Price">[^<]*</td><td class="num quantity" data-label="Quantity">1</td>`));
    expect(page.body).toContain('4 items.');
  });

  it('empties the cart with cart_clear', async () => {
    const c = webClient(t);
    await c.get('/cart');
    await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.mug } });
    const cleared = await c.api('POST', '/api/v1/action/cart_clear', { payload: {} });
    expect(cleared.json.data).toEqual({ items: [], item_count: 0 });
    expect((await c.get('/cart')).body).toContain('Your cart is empty.');
  });

  it('refuses API keys (machine and session) with 403', async () => {
    const { headers } = await t.keyHeaders();
    const machine = await t.request({ method: 'POST', url: '/api/v1/action/cart', headers, payload: { product_id: products.tee } });
    expect(machine.statusCode).toBe(403);
    expect(machine.json.errortype).toBe('AuthenticationError');
    const u = await t.createUser();
    const session = await t.login(u.email, u.password);
    const s = await t.request({ method: 'POST', url: '/api/v1/action/cart_clear', headers: session.headers, payload: {} });
    expect(s.statusCode).toBe(403);
  });

  it('refuses unavailable products, over-limit quantities and bad input, leaving the cart unchanged', async () => {
    const c = webClient(t);
    await c.get('/cart');
    const retired = await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.retired } });
    expect(retired.statusCode).toBe(422);
    expect(retired.json.errortype).toBe('ActionError');
    expect((await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.limited, quantity: 2 } })).statusCode).toBe(200);
    const over = await c.api('POST', '/api/v1/action/cart', { payload: { product_id: products.limited } });
    expect(over.statusCode).toBe(422);
    expect(over.json.error).toContain('At most 2');
    const bad = await c.api('POST', '/api/v1/action/cart', { payload: { quantity: 0 } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json.errortype).toBe('ValidationError');
    expect(Object.keys(bad.json.validation_errors).sort()).toEqual(['product_id', 'quantity']);
    expect((await c.get('/cart')).body).toMatch(/<td class="name">Signed print<\/td><td class="num unit-price" data-label="Price">[^<]*<\/td><td class="num quantity" data-label="Quantity">2<\/td>/);
  });

  it('refuses a guest without the CSRF proof', async () => {
    const c = webClient(t);
    await c.get('/cart');
    const res = await c.api('POST', '/api/v1/action/cart', { csrf: null, payload: { product_id: products.tee } });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
  });
});
