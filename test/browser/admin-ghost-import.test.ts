import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

// /admin/import/ghost in Chromium at desktop and phone widths: a superadmin uploads a Ghost 6 export and
// reads the report (counts per kind, the widened tier set); a second upload changes nothing.

const SHOTS = process.env.GATEHOUSE_SHOTS ?? SCREENSHOT_DIR;
const FIXTURE = path.resolve('test/fixtures/ghost/ghost-6-export.json');

describeBrowser('browser: import from Ghost', () => {
  const fx = useBrowserServer();

  async function signedIn(width: number): Promise<Page> {
    const admin = await fx.t.createUser({ permission: 10, firstName: 'Ada' });
    const page = await (await fx.browser.newContext({ viewport: { width, height: 900 } })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', admin.email);
    await page.fill('#password', admin.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  async function noHorizontalOverflow(page: Page) {
    const [scroll, client] = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return [root.scrollWidth as number, root.clientWidth as number];
    });
    expect(scroll).toBeLessThanOrEqual(client);
  }

  for (const width of [1280, 390]) {
    it(`uploads a Ghost export and shows the report (${width} px)`, async () => {
      mkdirSync(SHOTS, { recursive: true });
      const page = await signedIn(width);
      await page.goto(`${fx.t.baseUrl}/admin`);
      await page.click('nav.sub a[href="/admin/import/ghost"]');
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-ghost-import-${width}.png`), fullPage: true });
      await page.setInputFiles('#ghost-export', FIXTURE);
      await Promise.all([page.waitForSelector('#ghost-report'), page.click('#ghost-upload button[type=submit]')]);
      const created = width === 1280 ? '7' : '0';
      expect(await page.locator('tr[data-kind="post"] td[data-label="Created"]').textContent()).toBe(created);
      expect(await page.locator('#ghost-widened li').textContent()).toBe('bronze-and-gold (post): for bronze, gold; gated at level 10, so also silver');
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-ghost-report-${width}.png`), fullPage: true });
    });
  }
});
