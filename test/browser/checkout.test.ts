import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { startCardCheckout } from '../helpers/card-checkout.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { createProduct } from '../helpers/store.js';
import { createTier } from '../helpers/tiers.js';

describeBrowser('browser: checkout', () => {
  let stripe: FakeStripe | undefined;
  afterAll(async () => stripe?.stop());
  const fx = useBrowserServer();

  it('a member checks out the cart at the hosted checkout, pays, and lands on the order confirmation', async () => {
    const t = fx.t;
    stripe = await startCardCheckout(t, t.baseUrl, 'sk_test_browser');
    const tier = await createTier(t, { name: 'patron', displayName: 'Patron', level: 10 });
    const productId = await createProduct(t, { name: 'Patron monthly', price: 900, tierId: tier.tierId, refs: { pro_card_price_id: 'price_patron' } });
    await (t.services.db as any).updateTable('pro_products').set({ pro_after_purchase_message: 'Welcome, patron!' }).where('pro_product_id', '=', productId).execute();
    const u = await t.createUser();

    const page = await (await fx.browser.newContext()).newPage();
    await page.goto(`${t.baseUrl}/login?next=%2Fcart`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/cart`), page.click('main button[type=submit]')]);
    await page.evaluate((id) => (globalThis as any).serviceApi.post('cart', { product_id: id }), productId);
    await page.reload();
    await Promise.all([page.waitForURL(/\/pay\/cs_test_/), page.click('#checkout')]);
    expect(await page.locator('h1').textContent()).toBe('Test payment');
    await Promise.all([page.waitForURL(/\/order\/\d+$/), page.click('button:has-text("Pay")')]);
    expect(await page.locator('h1').textContent()).toBe('Thank you for your order');
    expect(await page.locator('#order').getAttribute('data-order-status')).toBe('paid');
    expect(await page.locator('.after-purchase').textContent()).toBe('Welcome, patron!');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'order-confirmation.png'), fullPage: true });
    await page.goto(`${t.baseUrl}/profile/subscription`);
    expect(await page.locator('#tier-name').textContent()).toContain('Patron');
  });
});
