import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

// Admin → Import and export members in Chromium: the file chosen, sent by the page's script, previewed,
// run with a progress bar that follows the job to its end; at desktop and phone widths.

const PHONE = { width: 390, height: 844 };
const CSV = [
  'id,email,name,note,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,deleted_at,labels,tiers,gift_id',
  ...Array.from({ length: 30 }, (_, i) => `,reader${i}@example.com,Reader ${i},,true,${i % 3 === 0},,,,,${i % 3 === 0 ? 'Gold Tier' : ''},`),
  ',not-an-email,Bad Row,,,,,,,,,',
  ',platinum@example.com,Unknown Tier,,,,,,,,Platinum,',
].join('\n');

describeBrowser('browser: member import and export page', () => {
  const fx = useBrowserServer();

  async function staffPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
    const staff = await fx.t.createUser({ permission: 5 });
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', staff.email);
    await page.fill('#password', staff.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  const shot = async (page: Page, name: string) => {
    const file = path.join(SCREENSHOT_DIR, name);
    await page.screenshot({ path: file, fullPage: true });
    mkdirSync('/tmp/shots', { recursive: true });
    copyFileSync(file, path.join('/tmp/shots', name));
  };

  for (const [label, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', PHONE]] as const) {
    it(`uploads, previews and runs an import with a progress bar (${label})`, { timeout: 90_000 }, async () => {
      if (label === 'desktop') await createTier(fx.t, { name: 'gold', displayName: 'Gold Tier', level: 20 });
      const page = await staffPage(viewport);
      await page.goto(`${fx.t.baseUrl}/admin/members/import`);
      await shot(page, `admin-import-empty-${label}.png`);
      await page.setInputFiles('#csv-file', { name: 'ghost-members.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
      await Promise.all([page.waitForURL(/\/admin\/members\/import\?upload=\d+$/), page.click('#upload-button')]);
      await expect.poll(() => page.textContent('#preview-counts')).toMatch(label === 'desktop' ? /^32 rows: 30 to create · 0 to update · 0 unchanged · 2 skipped$/ : /^32 rows: 0 to create · 0 to update · 30 unchanged · 2 skipped$/);
      await shot(page, `admin-import-preview-${label}.png`);
      if (label === 'phone') return;
      await Promise.all([page.waitForURL(/\/admin\/members\/import\/jobs\/\d+$/), page.click('#run-button')]);
      await expect.poll(() => page.textContent('#job-status'), { timeout: 30_000 }).toBe('Done');
      expect(await page.getAttribute('#import-progress', 'value')).toBe('100');
      await expect.poll(() => page.textContent('#job-counts')).toBe('32 rows read: 30 created · 0 updated · 0 unchanged · 2 skipped');
      await shot(page, `admin-import-done-${label}.png`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.goto(`${fx.t.baseUrl}/admin/members/import`).then(() => page.click('#export-link'))]);
      expect(download.suggestedFilename()).toMatch(/^members-\d{4}-\d{2}-\d{2}\.csv$/);
    });
  }
});
