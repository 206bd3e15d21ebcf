import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

const VIEWPORTS = [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const;
const DAY = 86_400_000;

/** Members and orders in the admin, in Chromium at desktop and phone widths: find, open, act; nothing overflows. */
describeBrowser('browser: admin members and orders', () => {
  const fx = useBrowserServer();
  const seeded = {} as { staff: { email: string; password: string }; boss: { email: string; password: string }; member: { userId: number; email: string }; failedOrder: number; gold: number };

  beforeAll(async () => {
    const t = fx.t;
    seeded.staff = await t.createUser({ permission: 5, firstName: 'Morgan', lastName: 'Staffer' });
    seeded.boss = await t.createUser({ permission: 10, firstName: 'Bea', lastName: 'Boss' });
    const gold = await createTier(t, { name: 'gold', displayName: 'Gold', level: 20 });
    seeded.gold = gold.tierId;
    const plan = await subscriptionProduct(t, { name: 'Gold monthly with a rather long plan name', tierId: gold.tierId, extra: { pro_price: 1200 } });
    const member = await t.createUser({ email: 'rosalind.franklin.long-address@crystallography-lab.example', firstName: 'Rosalind', lastName: 'Franklin' });
    seeded.member = member;
    for (let i = 0; i < 6; i++) await t.createUser({ email: `filler-${i}@example.com`, firstName: `Filler ${i}` });
    const now = t.clock.now().getTime();
    const db = t.services.db as any;
    const order = async (status: number, intent: string, error: string | null, offset: number) =>
      Number(
        (
          await db
            .insertInto('ord_orders')
            .values({ ord_usr_user_id: member.userId, ord_timestamp: new Date(now + offset), ord_total_cost: 1200, ord_currency: 'usd', ord_status: status, ord_payment_source: 'card_processor', ord_stripe_payment_intent_id: intent, ord_error: error })
            .returning('ord_order_id')
            .executeTakeFirstOrThrow()
        ).ord_order_id,
      );
    await order(2, 'pi_3QxPaidLongReference00000001', null, -3 * DAY);
    seeded.failedOrder = await order(3, 'pi_3QxFailedLongReference0000002', 'Your card was declined (insufficient funds)', -2 * DAY);
    await order(1, 'pi_3QxPendingLongReference000003', null, -DAY);
    const item = await insertSubscription(t, member.userId, plan, {
      source: 'card_processor',
      price: 1200,
      periodStart: new Date(now - 31 * DAY),
      periodEnd: new Date(now - DAY),
      extra: { odi_subscription_reference: 'sub_1QxLongSubscriptionReference', odi_subscription_status: 'in_grace', odi_subscription_grace_until: new Date(now + 6 * DAY) },
    });
    await t.services.tiers.membership.grantTierFromPurchase(member.userId, plan, 'card_processor', { type: 'order_item', id: item });
    await t.createMachineKey({ userId: member.userId });
  });

  const signIn = async (page: Page, who: { email: string; password: string }, next: string) => {
    await page.goto(`${fx.t.baseUrl}/login?next=${encodeURIComponent(next)}`);
    await page.fill('#email', who.email);
    await page.fill('#password', who.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}${next}`), page.click('main button[type=submit]')]);
  };
  const noHorizontalOverflow = async (page: Page, what: string) =>
    expect(await page.evaluate<{ scroll: number; inner: number }>('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })'), what).toSatisfy(
      (w: { scroll: number; inner: number }) => w.scroll <= w.inner,
    );

  for (const [name, viewport] of VIEWPORTS) {
    it(`${name}: staff find a member by part of their email and see their orders, the failed one included`, async () => {
      const page = await (await fx.browser.newContext({ viewport })).newPage();
      await signIn(page, seeded.staff, '/admin');
      await page.click('nav.sub a[href="/admin/members"]');
      await page.waitForURL(`${fx.t.baseUrl}/admin/members`);
      await page.fill('#q', 'FRANKLIN.LONG');
      await Promise.all([page.waitForURL(/\/admin\/members\?q=FRANKLIN\.LONG/), page.click('#member-filters button[type=submit]')]);
      expect(await page.locator('#members tbody tr').count()).toBe(1);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-members-search-${name}.png`), fullPage: true });
      await noHorizontalOverflow(page, 'members list');

      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/members/${seeded.member.userId}`), page.click(`#members a[href="/admin/members/${seeded.member.userId}"]`)]);
      expect(await page.locator('#member-tier').textContent()).toBe('Gold');
      expect(await page.locator('#tier-how .method').textContent()).toBe('purchase');
      const failed = page.locator(`#orders tr[data-order="${seeded.failedOrder}"]`);
      expect(await failed.locator('.status').textContent()).toBe('FailedYour card was declined (insufficient funds)');
      expect(await failed.locator('.reference code').textContent()).toBe('pi_3QxFailedLongReference0000002');
      expect(await page.locator('#orders tr[data-status="pending"]').count()).toBe(1);
      expect(await page.locator('#billing-issue').isVisible()).toBe(true);
      expect(await page.locator('#login-as').count()).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-member-page-${name}.png`), fullPage: true });
      // The parts one at a time, at their real size (the full page is tall).
      for (const id of ['member', 'staff-actions', 'member-orders', 'member-tier-history', 'member-keys']) await page.locator(`#${id}`).screenshot({ path: path.join(SCREENSHOT_DIR, `admin-member-${id}-${name}.png`) });
      await noHorizontalOverflow(page, 'member page');

      await page.goto(`${fx.t.baseUrl}/admin/orders?status=failed`);
      expect(await page.locator(`#orders tr[data-order="${seeded.failedOrder}"] .reference code`).textContent()).toBe('pi_3QxFailedLongReference0000002');
      expect(await page.locator('#orders tbody tr').count()).toBe(1);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-orders-${name}.png`), fullPage: true });
      await noHorizontalOverflow(page, 'orders list');

      await page.goto(`${fx.t.baseUrl}/admin`);
      await Promise.all([page.waitForURL(/\/admin\/orders\?status=failed$/), page.click('#failed-orders')]);
      expect(await page.locator('#order-total').textContent()).toBe('(1)');
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-dashboard-failed-orders-${name}.png`), fullPage: true });
      await page.context().close();
    });
  }

  it('phone: a superadmin removes the tier (confirmed) and signs in as the member from the member page', async () => {
    const page = await (await fx.browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    page.on('dialog', (d) => void d.accept());
    await signIn(page, seeded.boss, `/admin/members/${seeded.member.userId}`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-member-superadmin-phone.png'), fullPage: true });
    await noHorizontalOverflow(page, 'member page, superadmin');
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/members/${seeded.member.userId}`), page.click('#remove-tier button')]);
    expect(await page.locator('#member-notice').textContent()).toBe('Tier removed.');
    expect(await page.locator('#member-tier').textContent()).toBe('none');
    expect(await page.locator('#tier-history tbody tr').first().locator('.change').textContent()).toBe('Gold → no tier');
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('#login-as button')]);
    expect(await page.locator('#header-user').textContent()).toContain('Rosalind');
    await page.context().close();
  });
});
