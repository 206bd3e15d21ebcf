import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { SCREENSHOT_DIR, describeBrowser, launchBrowser, startServer } from '../helpers/browser.js';

describeBrowser('browser: the API reference page', () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;

  beforeAll(async () => {
    t = await startServer({ start: new Date() });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the document with Swagger UI from this server only, with no console error, at desktop and phone widths', { timeout: 120_000 }, async () => {
    const origin = new URL(t.baseUrl).origin;
    for (const [name, viewport] of [['api-docs', { width: 1280, height: 800 }], ['api-docs-mobile', { width: 390, height: 844 }]] as const) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const problems: string[] = [];
      const offServer: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      page.on('request', (r) => {
        const url = r.url();
        if (!url.startsWith('data:') && new URL(url).origin !== origin) offServer.push(url);
      });
      await page.goto(`${t.baseUrl}/api/docs`);
      await page.locator('.swagger-ui .info .title').waitFor();
      expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Gatehouse platform API');
      // Operations from each registry: an action, a CRUD class, management, the upload channel.
      await page.locator('.opblock-tag-section').first().waitFor();
      const tags = await page.locator('.opblock-tag').allTextContents();
      for (const tag of ['Auth', 'Actions', 'CRUD', 'Management', 'Drive uploads']) expect(tags.some((x) => x.startsWith(tag)), tag).toBe(true);
      await page.locator('.opblock-tag', { hasText: 'Auth' }).first().click();
      await page.locator('.opblock-summary-path', { hasText: '/auth/login' }).first().click();
      await page.locator('.opblock-body .responses-wrapper').first().waitFor();
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
      const overflow = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        const width: number = doc.documentElement.clientWidth;
        const wide = [...doc.querySelectorAll('body *')].filter((el: any) => el.getBoundingClientRect().right > width + 0.5).slice(0, 5);
        return { by: (doc.documentElement.scrollWidth as number) - width, wide: wide.map((el: any) => `${el.tagName}.${el.className}`) };
      });
      expect(overflow.by, overflow.wide.join(' ')).toBeLessThanOrEqual(0);
      expect(problems).toEqual([]);
      expect(offServer).toEqual([]);
      await context.close();
    }
  });
});
