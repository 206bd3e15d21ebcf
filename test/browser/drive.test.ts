import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

// The member's /drive page in Chromium: folders, the share dialog, links, the trash, the quota line, at
// desktop and phone sizes. Every change goes through the drive_* actions from the page's script.

describeBrowser('browser: the member Drive page', () => {
  const fx = useBrowserServer({ settings: { drive_active: true } });

  async function signedIn(viewport: { width: number; height: number }, tierName: string, features: Record<string, number | boolean>) {
    const t = fx.t;
    const tier = await createTier(t, { name: tierName, displayName: tierName[0]!.toUpperCase() + tierName.slice(1), level: 10 + tierName.length, features });
    const u = await t.createUser();
    await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${t.baseUrl}/login?next=%2Fdrive`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/drive`), page.click('main button[type=submit]')]);
    return { page, user: u };
  }

  async function noHorizontalOverflow(page: Page) {
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    expect(scroll).toBeLessThanOrEqual(client);
  }

  it('makes a folder, shares it, trashes and restores it, with the quota and the tier shown', async () => {
    const t = fx.t;
    const friend = await t.createUser();
    const { page } = await signedIn({ width: 1280, height: 800 }, 'plus', { drive_storage_bytes: 5 * 1024 ** 3, drive_max_file_bytes: 1024 ** 3, drive_share_links: true, drive_versioning_depth: 5 });
    expect(await page.locator('#quota-text').textContent()).toBe('0 B of 5.0 GB used');
    expect(await page.locator('#quota-tier').textContent()).toBe('Plus plan');
    expect(await page.locator('#upgrade-link').count()).toBe(0);

    await page.fill('#folder-name', 'Holiday photos');
    await Promise.all([page.waitForURL(/done=folder/), page.click('#folder-form button[type=submit]')]);
    const row = page.locator('tr[data-kind=folder]', { hasText: 'Holiday photos' });
    expect(await row.count()).toBe(1);

    // Share it with a friend as an editor.
    await row.locator('button[data-op=share]').click();
    await page.locator('#share-dialog').waitFor({ state: 'visible' });
    await page.fill('#share-email', friend.email);
    await page.selectOption('#share-new-role', 'editor');
    await page.click('#share-add button[type=submit]');
    await page.click('#share-save');
    await page.locator('#share-status', { hasText: 'Sharing saved.' }).waitFor();
    expect(await page.locator('#share-grants .grantee').textContent()).toBe(friend.email);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-share-1280.png'), fullPage: true });
    await page.click('#share-dialog [data-close]');

    // Rename, then trash and restore.
    await row.locator('button[data-op=rename]').click();
    await page.fill('#rename-name', 'Summer 2026');
    await Promise.all([page.waitForURL(/done=renamed/), page.click('#rename-form button[type=submit]')]);
    const renamed = page.locator('tr[data-kind=folder]', { hasText: 'Summer 2026' });
    await Promise.all([page.waitForURL(/done=trashed/), renamed.locator('button[data-op=trash]').click()]);
    expect(await page.locator('#drive-empty').textContent()).toBe('No files here yet.');
    await page.click('nav.views >> text=Trash');
    await Promise.all([page.waitForURL(/done=restored/), page.locator('tr[data-kind=folder]', { hasText: 'Summer 2026' }).locator('button[data-op=restore]').click()]);
    expect(await page.locator('#drive-empty').textContent()).toBe('The trash is empty.');
    await page.click('nav.views >> text=My files');
    expect(await page.locator('tr[data-kind=folder]', { hasText: 'Summer 2026' }).count()).toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-1280.png'), fullPage: true });
    await noHorizontalOverflow(page);
  });

  it('on a phone: an empty Drive near its limit offers an upgrade, and fits the screen', async () => {
    const { page } = await signedIn({ width: 390, height: 844 }, 'starter', { drive_storage_bytes: 0, drive_max_file_bytes: 0, drive_share_links: false, drive_versioning_depth: 0 });
    expect(await page.locator('#quota').textContent()).toContain('Starter');
    expect(await page.locator('#upgrade-link').getAttribute('href')).toBe('/profile/subscription#change-tier');
    await page.fill('#folder-name', 'Notes');
    await Promise.all([page.waitForURL(/done=folder/), page.click('#folder-form button[type=submit]')]);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-390.png'), fullPage: true });
    await noHorizontalOverflow(page);
  });
});
