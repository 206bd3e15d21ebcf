import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { recordEvent } from '../../src/outbound/events.js';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

// /admin/emails and /admin/outbox in Chromium at desktop and phone widths: a superadmin previews an edit,
// sends a test to themself, and reads a member email's text and HTML in the outbox.

const SHOTS = process.env.GATEHOUSE_SHOTS ?? SCREENSHOT_DIR;

describeBrowser('browser: member emails and the outbox', () => {
  const fx = useBrowserServer({ settings: { site_name: 'Lighthouse Club' } });

  async function signedIn(width: number): Promise<{ page: Page; email: string }> {
    const admin = await fx.t.createUser({ permission: 10, firstName: 'Ada' });
    const page = await (await fx.browser.newContext({ viewport: { width, height: 900 } })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', admin.email);
    await page.fill('#password', admin.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return { page, email: admin.email };
  }

  async function noHorizontalOverflow(page: Page) {
    const [scroll, client] = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return [root.scrollWidth as number, root.clientWidth as number];
    });
    expect(scroll).toBeLessThanOrEqual(client);
  }

  for (const width of [1280, 390]) {
    it(`edits, previews and test-sends a member email, and reads it in the outbox (${width} px)`, async () => {
      mkdirSync(SHOTS, { recursive: true });
      const { page, email } = await signedIn(width);
      await page.goto(`${fx.t.baseUrl}/admin/emails`);
      expect(await page.locator('#member-email-templates tbody tr').count()).toBe(9);
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-emails-${width}.png`), fullPage: true });

      await page.click('tr[data-template="payment_failed"] a');
      await page.fill('#subject', 'Payment trouble at {{site_name}}');
      await page.click('button[value=preview]');
      expect(await page.locator('#preview-subject').textContent()).toBe('Payment trouble at Lighthouse Club');
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-email-edit-${width}.png`), fullPage: true });
      await page.click('#test-send');
      expect(await page.locator('#test-sent').textContent()).toContain(`kept in the outbox for ${email}`);

      const member = await fx.t.createUser({ firstName: 'Bo' });
      await fx.t.services.db.transaction().execute((trx) =>
        recordEvent(trx, fx.t.clock, 'subscription.cancel_scheduled', { user_id: member.userId, product_name: 'Gold monthly', period_end: '2026-12-31 00:00:00' }, { userId: member.userId }),
      );
      await fx.t.services.memberEmails.sendDue();
      await page.goto(`${fx.t.baseUrl}/admin/outbox`);
      expect(await page.locator('#outbox tbody tr').first().textContent()).toContain(member.email);
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-outbox-${width}.png`), fullPage: true });
      await page.click('#outbox tbody tr:first-child a');
      const frame = page.frameLocator('#message-html');
      expect(await frame.locator('body').textContent()).toContain('You keep your access until 2026-12-31');
      await noHorizontalOverflow(page);
      await page.screenshot({ path: path.join(SHOTS, `admin-outbox-message-${width}.png`), fullPage: true });
    });
  }
});
