import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { LIFECYCLE_DEFAULTS } from '../helpers/lifecycle.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

/** The billing-issue views (DESIGN 14) in Chromium, at desktop and phone widths: readable, nothing overflows. */
describeBrowser('browser: billing issues on the member and admin pages', () => {
  const stripe = new FakeStripe();
  beforeAll(async () => void (await stripe.start()));
  afterAll(async () => stripe.stop());
  const fx = useBrowserServer({ settings: { ...LIFECYCLE_DEFAULTS } });

  const signIn = async (page: Page, email: string, password: string, next: string) => {
    await page.goto(`${fx.t.baseUrl}/login?next=${encodeURIComponent(next)}`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}${next}`), page.click('main button[type=submit]')]);
  };
  const noHorizontalOverflow = async (page: Page) =>
    expect(await page.evaluate<{ scroll: number; inner: number }>('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })')).toSatisfy((w: { scroll: number; inner: number }) => w.scroll <= w.inner);

  it('a member in grace sees what is wrong and what to do, and reaches the billing portal; the admin sees the status', async () => {
    const t = fx.t;
    await t.services.settings.set('card_processor_api_key', 'sk_test_billing_issue');
    await t.services.settings.set('card_processor_api_base', stripe.base);
    const tier = await createTier(t, { name: 'silver', displayName: 'Silver', level: 20 });
    const productId = await subscriptionProduct(t, { name: 'Silver monthly', tierId: tier.tierId, extra: { pro_price: 3000, pro_card_price_id: 'price_silver' } });
    const u = await t.createUser({ firstName: 'Ada', lastName: 'Member' });
    const now = t.clock.now().getTime();
    const ref = `sub_grace_${u.userId}`;
    const itemId = await insertSubscription(t, u.userId, productId, {
      source: 'card_processor',
      price: 3000,
      periodStart: new Date(now - 31 * 86_400_000),
      periodEnd: new Date(now - 86_400_000),
      extra: { odi_subscription_reference: ref, odi_subscription_status: 'in_grace', odi_subscription_grace_until: new Date(now + 6 * 86_400_000) },
    });
    stripe.addSubscription(ref, 'price_silver', Math.floor((now - 86_400_000) / 1000), { user_id: String(u.userId), product_id: String(productId) });
    await t.services.tiers.membership.grantTierFromPurchase(u.userId, productId, 'card_processor', { type: 'order_item', id: itemId });

    for (const [width, height, name] of [
      [1280, 900, 'billing-issue-member-1280.png'],
      [390, 844, 'billing-issue-member-phone.png'],
    ] as const) {
      const page = await (await fx.browser.newContext({ viewport: { width, height } })).newPage();
      await signIn(page, u.email, u.password, '/profile/subscription');
      const card = page.locator(`section[data-order-item="${itemId}"]`);
      expect(await card.locator('.status').textContent()).toBe('Payment failed, retrying');
      expect(await card.locator('.billing-issue').textContent()).toContain('Your last payment did not go through.');
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
      await noHorizontalOverflow(page);
      if (width === 390) {
        await Promise.all([page.waitForURL(/\/portal\/bps_test_/), card.locator('a.fix-payment').click()]);
        expect(stripe.portalSessions.at(-1)).toMatchObject({ customer: `cus_${ref}`, return_url: `${t.baseUrl}/profile/subscription` });
      }
      await page.context().close();
    }

    const s = await t.createUser({ permission: 5 });
    for (const [width, height, name] of [
      [1280, 900, 'billing-issue-admin-1280.png'],
      [390, 844, 'billing-issue-admin-phone.png'],
    ] as const) {
      const page = await (await fx.browser.newContext({ viewport: { width, height } })).newPage();
      await signIn(page, s.email, s.password, `/admin/members/${u.userId}`);
      expect(await page.locator('#billing-issue').textContent()).toContain('Billing issue:');
      expect(await page.locator(`tr[data-order-item="${itemId}"] .grace-until`).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
      await noHorizontalOverflow(page);
      await page.context().close();
    }
  });
});
