import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ownMailbox } from '../../src/plugins/mailbox/mailboxes.js';
import { deliver } from '../../src/plugins/mailbox/messages.js';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

// The member's /mail page in Chromium: the thread list, a thread, compose with an attachment, and the
// locked state of a Fortress mailbox with its unlock prompt, at desktop and phone widths.

const DOMAIN = 'mail.example.com';

describeBrowser('browser: the mailbox page', () => {
  const fx = useBrowserServer({ activePlugins: ['mailbox'], settings: { mailbox_domain: DOMAIN } });

  async function signedIn(viewport: { width: number; height: number }) {
    const t = fx.t;
    const u = await t.createUser();
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${t.baseUrl}/login?next=%2Fmail`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/mail`), page.click('main button[type=submit]')]);
    await page.locator('#thread-list, #mail-empty').first().waitFor();
    return { page, user: u };
  }

  async function seed(userId: number, n: number) {
    const box = await ownMailbox(fx.t.services.db, userId, null);
    for (let i = 1; i <= n; i++) {
      await deliver(fx.t.services.db, box, {
        direction: 'inbound',
        messageIdHeader: `<seed-${userId}-${i}@example.org>`,
        inReplyTo: null,
        references: [],
        sender: `Correspondent ${i} <c${i}@example.org>`,
        recipients: box.address,
        subject: `Trip planning, part ${i}`,
        body: `Hello,\n\nHere are the notes for part ${i} of the trip. Bring boots.\n\nBest`,
        hops: [`from mx.example.org by ${DOMAIN}; Sun, 01 Mar 2026 10:00:00 +0000`],
        sizeBytes: 2000 + i * 150,
        attachmentCount: i === 2 ? 1 : 0,
        time: new Date(Date.now() - (n - i) * 3600_000),
        event: { kind: 'received', title: 'Received by SMTP', detail: 'from 203.0.113.5 (mx.example.org)' },
      });
    }
  }

  async function noHorizontalOverflow(page: Page) {
    const [scroll, client] = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return [root.scrollWidth as number, root.clientWidth as number];
    });
    expect(scroll).toBeLessThanOrEqual(client);
  }

  it('lists threads, opens one, and sends a reply with an attachment', async () => {
    const { page, user } = await signedIn({ width: 1280, height: 800 });
    await seed(user.userId, 4);
    await page.reload();
    await page.locator('#thread-list li').first().waitFor();
    expect(await page.locator('#thread-list li').count()).toBe(4);
    expect(await page.locator('#thread-list li').first().locator('.subject').textContent()).toBe('Trip planning, part 4');
    expect(await page.locator('#locked-banner').isHidden()).toBe(true);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'mail-list-1280.png'), fullPage: true });

    await page.locator('#thread-list li', { hasText: 'part 2' }).click();
    await page.locator('#thread-messages article').first().waitFor();
    expect(await page.locator('#thread-messages pre').first().textContent()).toContain('notes for part 2');
    await page.click('text=Delivery timeline');
    await page.locator('.timeline li', { hasText: 'Received by SMTP' }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'mail-thread-1280.png'), fullPage: true });

    await page.click('button:has-text("Reply")');
    await page.locator('#compose-form').waitFor();
    await page.fill('#compose-to', 'c2@example.org');
    await page.fill('#compose-subject', 'Re: Trip planning, part 2');
    await page.fill('#compose-body', 'Thanks, boots packed.');
    await page.setInputFiles('#compose-files', [{ name: 'packing-list.txt', mimeType: 'text/plain', buffer: Buffer.from('boots\nmap\n') }]);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'mail-compose-1280.png'), fullPage: true });
    await page.click('#compose-send');
    await page.locator('#thread-messages article').nth(1).waitFor();
    expect(await page.locator('#thread-messages article').nth(1).locator('pre').textContent()).toBe('Thanks, boots packed.');
    const out = await fx.t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', 'c2@example.org').execute();
    expect(out.map((r) => r.mob_subject)).toEqual(['Re: Trip planning, part 2']);
  });

  it('shows a locked Fortress mailbox with placeholders and an unlock prompt, and refuses to send, on a phone', async () => {
    const { page, user } = await signedIn({ width: 390, height: 844 });
    const setup = await page.evaluate(async (password) => {
      const api = (globalThis as any).serviceApi;
      await api.post('vault_setup_options', { password });
      await api.post('vault_setup_verify', { acknowledge_loss: true, passphrase: 'a long enough passphrase here' });
      return true;
    }, user.password);
    expect(setup).toBe(true);
    await seed(user.userId, 3);
    const box = await ownMailbox(fx.t.services.db, user.userId, null);
    const staff = await fx.t.staffHeaders();
    expect((await fx.t.request({ method: 'PUT', url: `/api/v1/Mailbox/${box.id}?mbx_security_level=fortress`, headers: staff.headers })).statusCode).toBe(200);
    await fx.t.services.scheduler.runNow('mailbox_reseal');
    await page.evaluate(async () => (globalThis as any).serviceApi.post('vault_lock', {}));
    await page.reload();
    await page.locator('#thread-list li').first().waitFor();
    expect(await page.locator('#locked-banner').isVisible()).toBe(true);
    expect(await page.locator('#unlock-link').getAttribute('href')).toBe('/profile/security');
    expect(await page.locator('#thread-list li').count()).toBe(3);
    expect(await page.locator('#thread-list li .subject').first().textContent()).toBe('(locked)');
    await noHorizontalOverflow(page);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'mail-locked-390.png'), fullPage: true });

    await page.click('#compose-link');
    await page.fill('#compose-to', 'friend@example.org');
    await page.fill('#compose-body', 'secret plans');
    await page.click('#compose-send');
    await page.locator('#compose-note', { hasText: 'Not sent' }).waitFor();
    await noHorizontalOverflow(page);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'mail-compose-locked-390.png'), fullPage: true });
    expect(await fx.t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', 'friend@example.org').execute()).toEqual([]);
  });
});
