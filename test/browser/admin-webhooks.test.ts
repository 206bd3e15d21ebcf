import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebhookWorker } from '../../src/outbound/webhooks/worker.js';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

describeBrowser('browser: the /admin/webhooks page', () => {
  const fx = useBrowserServer({ settings: { webhook_allow_private_targets: true } });
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => rx?.close());

  async function signInPage(email: string, password: string, viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  it('a superadmin adds an endpoint (secret shown once), sends a test, reads the delivery log and redelivers', async () => {
    const admin = await fx.t.createUser({ permission: 10 });
    const worker = new WebhookWorker({ db: fx.t.services.db, clock: fx.t.clock, settings: fx.t.services.settings });
    const page = await signInPage(admin.email, admin.password, { width: 1280, height: 800 });
    await page.goto(`${fx.t.baseUrl}/admin/webhooks`);
    await page.fill('#url', 'https://127.0.0.1:1/x');
    await fx.t.services.settings.set('webhook_allow_private_targets', false);
    await page.click('text=Add endpoint');
    expect(await page.locator('#url-error').textContent()).toMatch(/private, loopback or link-local/);
    await fx.t.services.settings.set('webhook_allow_private_targets', true);
    await page.fill('#url', rx.url);
    await page.fill('#description', 'Our CRM');
    await page.check('input[value="tier.granted"]');
    await page.check('input[value="subscription.billing_issue"]');
    await page.click('text=Add endpoint');
    const secret = (await page.locator('#new-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-webhooks.png'), fullPage: true });
    await page.goto(`${fx.t.baseUrl}/admin/webhooks`);
    expect(await page.content()).not.toContain(secret);
    await page.click('#endpoints button[data-action=test]');
    expect(await page.locator('#webhook-notice').textContent()).toMatch(/Test event evt_\S+ queued/);
    await worker.runDueDeliveries();
    rx.answer({ status: 500, body: 'receiver down' });
    await page.click('button[data-action=test]');
    await worker.runDueDeliveries();
    await page.goto(page.url().replace(/\/test$/, ''));
    const statuses = await page.locator('#attempts td.status').allTextContents();
    expect(statuses).toEqual(['500', '200']);
    expect(await page.locator('#attempts').textContent()).toMatch(/\d+ ms/);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-webhook-log.png'), fullPage: true });
    await page.locator('#attempts tr.failed button[data-action=redeliver]').click();
    expect(await page.locator('#webhook-notice').textContent()).toContain('1 delivery due again');
    await worker.runDueDeliveries();
    await page.goto(page.url().replace(/\/redeliver$/, ''));
    expect(await page.locator('#attempts td.status').allTextContents()).toEqual(['200', '500', '200']);
    expect(rx.received).toHaveLength(3);
    expect(rx.received[2]!.headers['webhook-id']).toBe(rx.received[1]!.headers['webhook-id']);

    const phone = await signInPage(admin.email, admin.password, { width: 390, height: 844 });
    await phone.goto(`${fx.t.baseUrl}/admin/webhooks`);
    await phone.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-webhooks-phone.png'), fullPage: true });
    await phone.goto(page.url());
    await phone.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-webhook-log-phone.png'), fullPage: true });
    const width = await phone.evaluate('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(390);
  });

  it('is for superadmins only', async () => {
    const staff = await fx.t.createUser({ permission: 5 });
    const page = await signInPage(staff.email, staff.password, { width: 1280, height: 800 });
    const res = await page.goto(`${fx.t.baseUrl}/admin/webhooks`);
    expect(res!.status()).toBe(403);
  });
});
