import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

const VIEWPORTS = [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const;

describeBrowser('browser: the general settings page (site, Drive switch, billing sources, provider settings)', () => {
  const fx = useBrowserServer();

  async function signInPage(email: string, password: string, viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  const overflow = (page: Page) => page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

  for (const [label, viewport] of VIEWPORTS) {
    it(`a staff member switches Drive on from Settings (${label}); the page does not overflow`, async () => {
      await fx.t.services.settings.set('drive_active', false);
      const staff = await fx.t.createUser({ permission: 5 });
      const page = await signInPage(staff.email, staff.password, viewport);
      await page.goto(`${fx.t.baseUrl}/admin`);
      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/settings`), page.click('nav.sub >> text=Settings')]);
      expect(await page.locator('#drive-state').textContent()).toBe('Drive is off site-wide.');
      expect(await page.locator('#store-state').textContent()).toContain('The store is closed');
      expect(await page.locator('#providers-superadmin-only').count()).toBe(1);
      expect(await overflow(page)).toBe(0);
      await page.check('#drive_active');
      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/settings`), page.click('#save-general')]);
      expect(await page.locator('#settings-saved').textContent()).toBe('Settings saved.');
      expect(await page.locator('#drive-state').textContent()).toBe('Drive is on.');
      expect(await page.isChecked('#drive_active')).toBe(true);
      expect(fx.t.services.settings.bool('drive_active')).toBe(true);
      expect(await overflow(page)).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-settings-staff-${label}.png`), fullPage: true });
      // The member's Drive page is there now.
      await page.goto(`${fx.t.baseUrl}/drive`);
      expect(await page.locator('h1').textContent()).not.toBe('Not found');
    });
  }

  for (const [label, viewport] of VIEWPORTS) {
    it(`a superadmin sets the card processor's secrets, shown only as set (${label})`, async () => {
      await fx.t.services.settings.set('card_processor_api_key', '');
      await fx.t.services.settings.set('card_processor_webhook_secret', '');
      const admin = await fx.t.createUser({ permission: 10 });
      const page = await signInPage(admin.email, admin.password, viewport);
      await page.goto(`${fx.t.baseUrl}/admin/settings`);
      expect(await page.locator('tr[data-source="card_processor"] .status').textContent()).toBe('Not configured');
      expect(await overflow(page)).toBe(0);
      await page.fill('#card_processor_api_key', 'sk_test_browser_secret');
      await page.fill('#card_processor_webhook_secret', 'whsec_browser_secret');
      await Promise.all([page.waitForURL(/\/admin\/settings/), page.click('button:has-text("Save Card processor (Stripe)")')]);
      expect(await page.locator('#settings-saved').textContent()).toBe('Card processor (Stripe) settings saved: configured.');
      expect(await page.locator('tr[data-source="card_processor"] .status').textContent()).toBe('Configured');
      expect(await page.locator('#card_processor_api_key-state').textContent()).toBe('set');
      expect(await page.content()).not.toContain('sk_test_browser_secret');
      expect(await overflow(page)).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-settings-superadmin-${label}.png`), fullPage: true });
      // The status table and a provider form, one screen each (the full page is long on a phone).
      for (const part of ['billing-sources', 'provider-card_processor', 'provider-ios_store']) {
        await page.locator(`#${part}`).evaluate((el) => el.scrollIntoView());
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `admin-settings-${part}-${label}.png`) });
      }
    });
  }
});
