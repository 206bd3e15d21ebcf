import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

// The top bar in Chromium: the links stand in the bar on a desktop; on a phone they fold into a "Menu"
// button (a <details> summary, no script) that opens them by mouse and keyboard. No main page scrolls
// sideways at 390 px or at 1280 px.

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describeBrowser('browser: the top bar and the phone menu', () => {
  const fx = useBrowserServer({ settings: { drive_active: true, products_active: true, subscriptions_active: true }, activePlugins: ['mailbox'] });

  async function signedIn(viewport: { width: number; height: number }, permission = 0): Promise<{ context: BrowserContext; page: Page }> {
    const t = fx.t;
    const tier = await createTier(t, {
      displayName: 'Plus',
      level: 20,
      features: { drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 250_000_000, drive_share_links: true, drive_versioning_depth: 3, mailbox_fleet_slot: false, mailbox_fleet_max_domains: 0 },
    });
    const u = await t.createUser({ permission, firstName: 'Maximiliana', lastName: 'Longname-Navigator' });
    await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    const context = await fx.browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login?next=%2F`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/`), page.click('main button[type=submit]')]);
    return { context, page };
  }

  async function overflow(page: Page): Promise<{ scroll: number; inner: number }> {
    return page.evaluate(() => ({ scroll: (globalThis as any).document.documentElement.scrollWidth as number, inner: (globalThis as any).innerWidth as number }));
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, `nav-${name}.png`), fullPage: false });

  it('on a desktop the member’s links stand in the bar and the menu button is hidden', async () => {
    const { context, page } = await signedIn(DESKTOP, 5);
    await page.goto(`${fx.t.baseUrl}/profile/subscription`);
    expect(await page.locator('#menu-button').isVisible()).toBe(false);
    for (const id of ['nav-drive', 'nav-mailbox', 'nav-subscription', 'nav-security', 'nav-app-sessions', 'nav-dashboard', 'header-user']) {
      expect(await page.locator(`#${id}`).isVisible(), id).toBe(true);
    }
    expect(await page.locator('header button[type=submit]').isVisible()).toBe(true);
    // Assistive technology finds the links by role in the labelled navigation, though the <details> is closed.
    const site = page.getByRole('navigation', { name: 'Site' });
    for (const name of ['Drive', 'Mail', 'Subscription', 'Security', 'App sessions', 'Dashboard']) expect(await site.getByRole('link', { name, exact: true }).isVisible(), name).toBe(true);
    const tree = await page.locator('header').ariaSnapshot();
    expect(tree).toContain('link "Drive"');
    expect(tree).toContain('button "Sign out"');
    // The bar is one row: every link sits at the brand's height.
    const brandBox = (await page.locator('header .brand').boundingBox())!;
    const lastBox = (await page.locator('header button[type=submit]').boundingBox())!;
    expect(Math.abs(lastBox.y + lastBox.height / 2 - (brandBox.y + brandBox.height / 2))).toBeLessThan(8);
    await shot(page, 'desktop-member');
    await page.click('#nav-drive');
    await page.waitForURL(`${fx.t.baseUrl}/drive`);
    expect(await page.locator('#quota-text').textContent()).toBe('0 B of 1 GB used');
    await context.close();
  });

  it('on a phone the bar is a menu button that opens the links, by click and by keyboard', async () => {
    const { context, page } = await signedIn(PHONE);
    await page.goto(`${fx.t.baseUrl}/profile/subscription`);
    const button = page.locator('#menu-button');
    expect(await button.isVisible()).toBe(true);
    expect(await page.locator('#nav-drive').isVisible()).toBe(false);
    expect(await page.locator('#site-menu').getAttribute('open')).toBeNull();
    // The closed menu is a group named by its summary, with none of its links exposed until it opens.
    const closed = await page.locator('header').ariaSnapshot();
    expect(closed).toContain('group: Menu');
    expect(closed).not.toContain('link "Drive"');
    await shot(page, 'phone-closed');

    await button.click();
    expect(await page.locator('#site-menu').getAttribute('open')).toBe('');
    for (const id of ['nav-drive', 'nav-mailbox', 'nav-subscription', 'nav-security', 'nav-app-sessions', 'header-user']) {
      expect(await page.locator(`#${id}`).isVisible(), id).toBe(true);
    }
    expect(await page.locator('#nav-dashboard').count()).toBe(0);
    // The open menu lies over the page, inside the screen.
    const menu = (await page.locator('#site-nav').boundingBox())!;
    expect(menu.x).toBeGreaterThanOrEqual(0);
    expect(menu.x + menu.width).toBeLessThanOrEqual(PHONE.width);
    expect((await overflow(page)).scroll).toBeLessThanOrEqual(PHONE.width);
    await shot(page, 'phone-open');
    await button.click();
    expect(await page.locator('#nav-drive').isVisible()).toBe(false);

    // Keyboard: Tab from the brand reaches the button; Enter opens, Tab walks the links, Enter follows one.
    await page.focus('header .brand');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('menu-button');
    await page.keyboard.press('Enter');
    expect(await page.locator('#nav-drive').isVisible()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('nav-drive');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('nav-mailbox');
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/mail`), page.keyboard.press('Enter')]);
    // A new page starts with the menu closed; sign out from it.
    expect(await page.locator('#nav-drive').isVisible()).toBe(false);
    await button.click();
    await Promise.all([page.waitForURL(/\/login$/), page.click('header button[type=submit]')]);
    await context.close();
  });

  // A cart (a member's or a guest's) with twelve long-named, high-priced shirts: the widest content a main page shows.
  async function withFullCart(page: Page): Promise<void> {
    const tee = await subscriptionProduct(fx.t, { name: 'Gatehouse supporter T-shirt, extra large', tierId: null, period: null, extra: { pro_price: 123456, pro_currency: 'usd' } });
    await page.goto(`${fx.t.baseUrl}/cart`);
    await page.evaluate((id) => (globalThis as any).serviceApi.post('cart', { product_id: id, quantity: 12 }), tee);
  }

  const MEMBER_PAGES = ['/', '/pricing', '/cart', '/drive', '/mail', '/profile/subscription', '/profile/security', '/profile/app-sessions', '/admin', '/admin/tiers/new'];

  async function expectNoSidewaysScroll(page: Page, label: string, pages: string[]): Promise<void> {
    for (const p of pages) {
      await page.goto(`${fx.t.baseUrl}${p}`);
      const { scroll, inner } = await overflow(page);
      expect(scroll, `${label} ${p}`).toBeLessThanOrEqual(inner);
    }
  }

  /** A member with a full cart at this width: no main page scrolls sideways; the cart and the tier form shot. */
  async function memberPagesFit(viewport: { width: number; height: number }, label: 'phone' | 'desktop'): Promise<void> {
    const { context, page } = await signedIn(viewport, 5);
    await withFullCart(page);
    await expectNoSidewaysScroll(page, label, MEMBER_PAGES);
    // The cart with its prices and total, and the tier form's number inputs with their unit pickers.
    await page.goto(`${fx.t.baseUrl}/cart`);
    expect(await page.locator('.cart-total').textContent()).toBe('$14,814.72');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `nav-${label}-cart.png`), fullPage: true });
    await page.goto(`${fx.t.baseUrl}/admin/tiers/new`);
    await page.locator('#feature_drive_storage_bytes').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `nav-${label}-tier-form.png`) });
    await context.close();
  }

  it('no main page scrolls sideways at 390 px (a member with a full cart)', () => memberPagesFit(PHONE, 'phone'));

  it('no main page scrolls sideways at 1280 px (a member with a full cart)', () => memberPagesFit(DESKTOP, 'desktop'));

  it('no public page scrolls sideways at 390 px for a guest with a full cart', async () => {
    const context = await fx.browser.newContext({ viewport: PHONE });
    const guest = await context.newPage();
    await withFullCart(guest);
    await expectNoSidewaysScroll(guest, 'guest', ['/', '/pricing', '/cart', '/login', '/register']);
    await guest.screenshot({ path: path.join(SCREENSHOT_DIR, 'nav-phone-guest.png') });
    await context.close();
  });

  it('the tab shows the site icon', async () => {
    const page = await (await fx.browser.newContext({ viewport: DESKTOP })).newPage();
    const icon = await page.goto(`${fx.t.baseUrl}/favicon.ico`);
    expect(icon!.status()).toBe(200);
    expect(icon!.headers()['content-type']).toBe('image/svg+xml');
    expect(page.url()).toBe(`${fx.t.baseUrl}/favicon.svg`);
    await page.context().close();
  });
});
