import { expect, it } from 'vitest';
import { describeBrowser, useBrowserServer } from '../helpers/browser.js';

describeBrowser('browser: a guest’s cart', () => {
  const fx = useBrowserServer();

  it('a guest adds to the cart, signs in, and the cart is kept; the cart page empties it', async () => {
    const now = fx.t.clock.now();
    const row = await (fx.t.services.db as any)
      .insertInto('pro_products')
      .values({ pro_name: 'Annual pass', pro_link: 'annual-pass', pro_is_active: true, pro_create_time: now, pro_update_time: now })
      .returning('pro_product_id')
      .executeTakeFirstOrThrow();
    const productId = Number(row.pro_product_id);
    const u = await fx.t.createUser();
    const page = await (await fx.browser.newContext()).newPage();
    await page.goto(`${fx.t.baseUrl}/cart`);
    expect(await page.locator('#cart-empty').textContent()).toContain('empty');
    const added = await page.evaluate((id) => (globalThis as any).serviceApi.post('cart', { product_id: id, quantity: 2 }), productId);
    expect(added.item_count).toBe(2);
    await page.goto(`${fx.t.baseUrl}/login?next=%2Fcart`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/cart`), page.click('main button[type=submit]')]);
    expect(await page.locator(`tr[data-product="${productId}"]`).textContent()).toBe('Annual pass—2—');
    await Promise.all([page.waitForLoadState('load'), page.click('#cart-clear')]);
    await page.waitForSelector('#cart-empty');
  });
});
