import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { LIFECYCLE_DEFAULTS } from '../helpers/lifecycle.js';
import { STAND_IN_SOURCE_SETTINGS } from '../helpers/store.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { insertSubscription, orderItem, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

describeBrowser('browser: the member subscription view', () => {
  const stripe = new FakeStripe();
  beforeAll(async () => void (await stripe.start()));
  afterAll(async () => stripe.stop());
  // The store is open only with a configured billing source: the stand-in one, while the card processor has no webhook secret.
  const fx = useBrowserServer({ settings: { ...LIFECYCLE_DEFAULTS, ...STAND_IN_SOURCE_SETTINGS } });

  it('a member cancels and reactivates, confirming each step, on a phone-sized screen', async () => {
    const t = fx.t;
    await t.services.settings.set('card_processor_api_key', 'sk_test_member_view');
    await t.services.settings.set('card_processor_api_base', stripe.base);
    const tier = await createTier(t, { name: 'silver', displayName: 'Silver', level: 20 });
    const productId = await subscriptionProduct(t, { name: 'Silver monthly', tierId: tier.tierId, extra: { pro_price: 3000, pro_card_price_id: 'price_silver' } });
    const u = await t.createUser();
    const now = t.clock.now().getTime();
    const periodEnd = new Date(now + 20 * 86_400_000);
    const ref = `sub_member_${u.userId}`;
    const itemId = await insertSubscription(t, u.userId, productId, {
      source: 'card_processor',
      price: 3000,
      periodStart: new Date(now - 10 * 86_400_000),
      periodEnd,
      extra: { odi_subscription_reference: ref },
    });
    stripe.addSubscription(ref, 'price_silver', Math.floor(periodEnd.getTime() / 1000), { user_id: String(u.userId), product_id: String(productId) });
    await t.services.tiers.membership.grantTierFromPurchase(u.userId, productId, 'card_processor', { type: 'order_item', id: itemId });

    const page = await (await fx.browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await page.goto(`${t.baseUrl}/login?next=%2Fprofile%2Fsubscription`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/subscription`), page.click('main button[type=submit]')]);
    const card = page.locator(`section[data-order-item="${itemId}"]`);
    expect(await card.locator('.status').textContent()).toBe('Active');
    expect(await page.locator('#tier-name').textContent()).toContain('Silver');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'member-subscription.png'), fullPage: true });

    // Cancel: the confirmation appears first; going back changes nothing.
    await card.locator('button', { hasText: 'Cancel subscription' }).click();
    await page.locator('#confirm').waitFor({ state: 'visible' });
    expect(await page.locator('#confirm-text').textContent()).toContain('Your access ends at the end of the paid period');
    await page.click('#confirm-no');
    expect(await page.locator('#confirm').isHidden()).toBe(true);
    expect(stripe.calls.filter((c) => c.path === `/v1/subscriptions/${ref}`)).toHaveLength(0);

    await card.locator('button', { hasText: 'Cancel subscription' }).click();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'member-subscription-confirm.png'), fullPage: true });
    await Promise.all([page.waitForURL(/done=cancelled/), page.click('#confirm-yes')]);
    expect(await page.locator('#done').textContent()).toBe('Your subscription has been cancelled.');
    expect(await card.locator('.status').textContent()).toBe('Cancelled');
    expect((await orderItem(t, itemId)).odi_subscription_status).toBe('cancelled');
    expect(stripe.subscriptions.get(ref)!.cancel_at_period_end).toBe(true);

    await card.locator('button', { hasText: 'Reactivate subscription' }).click();
    await Promise.all([page.waitForURL(/done=reactivated/), page.click('#confirm-yes')]);
    expect(await page.locator('#done').textContent()).toBe('Your subscription has been reactivated.');
    expect(await card.locator('.status').textContent()).toBe('Active');
    expect((await orderItem(t, itemId)).odi_subscription_status).toBe('active');
    expect(stripe.subscriptions.get(ref)!.cancel_at_period_end).toBe(false);
  });

  it('a refusal is shown in the page as the server worded it, and nothing changes', async () => {
    const t = fx.t;
    const tier = await createTier(t, { name: 'gold', displayName: 'Gold', level: 30 });
    const productId = await subscriptionProduct(t, { name: 'Gold monthly', tierId: tier.tierId, extra: { pro_price: 6000, pro_card_price_id: 'price_gold' } });
    const u = await t.createUser();
    const now = t.clock.now().getTime();
    const itemId = await insertSubscription(t, u.userId, productId, {
      source: 'card_processor',
      price: 6000,
      periodStart: new Date(now - 86_400_000),
      periodEnd: new Date(now + 29 * 86_400_000),
      extra: { odi_subscription_reference: `sub_refused_${u.userId}` },
    });
    await t.services.tiers.membership.grantTierFromPurchase(u.userId, productId, 'card_processor', { type: 'order_item', id: itemId });
    const page = await (await fx.browser.newContext()).newPage();
    await page.goto(`${t.baseUrl}/login?next=%2Fprofile%2Fsubscription`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/subscription`), page.click('main button[type=submit]')]);
    // The page was rendered while cancelling was allowed; the administrator turns it off meanwhile.
    await t.services.settings.set('subscription_cancellation_enabled', false);
    await page.locator(`section[data-order-item="${itemId}"] button`, { hasText: 'Cancel subscription' }).click();
    await page.click('#confirm-yes');
    await page.locator('#result').filter({ hasText: /./ }).waitFor();
    expect(await page.locator('#result').textContent()).toMatch(/cancel/i);
    expect((await orderItem(t, itemId)).odi_subscription_status).toBe('active');
    await t.services.settings.set('subscription_cancellation_enabled', true);
  });
});
