import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

// The member's /drive page in Chromium: folders, the share dialog, links, the trash, the quota line, at
// desktop and phone sizes; an upload with its progress bar that survives a lost answer and a dropped
// connection, then downloaded and shared by link. Every change goes through the drive_* actions and the
// chunk endpoints from the page's script.

const CHUNK = 64 * 1024;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-drive-browser-'));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describeBrowser('browser: the member Drive page', () => {
  const fx = useBrowserServer({ config: { dataDir }, settings: { drive_active: true, drive_upload_chunk_bytes: CHUNK } });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

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
    const [scroll, client] = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return [root.scrollWidth as number, root.clientWidth as number];
    });
    expect(scroll).toBeLessThanOrEqual(client);
  }

  it('makes a folder, shares it, trashes and restores it, with the quota and the tier shown', async () => {
    const t = fx.t;
    const friend = await t.createUser();
    const { page } = await signedIn({ width: 1280, height: 800 }, 'plus', { drive_storage_bytes: 5_000_000_000, drive_max_file_bytes: 1_000_000_000, drive_share_links: true, drive_versioning_depth: 5 });
    expect(await page.locator('#quota-text').textContent()).toBe('0 B of 5 GB used');
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
    await page.locator('tr[data-kind=folder]', { hasText: 'Notes' }).locator('button[data-op=share]').click();
    await page.locator('#share-dialog').waitFor({ state: 'visible' });
    await page.fill('#share-email', 'someone.with.a.rather.long.address@example.com');
    await page.click('#share-add button[type=submit]');
    await page.click('#share-save');
    await page.locator('#share-status', { hasText: 'There is no member with the email address someone.with.a.rather.long.address@example.com.' }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-share-390.png') });
    await noHorizontalOverflow(page);
  });

  it('uploads a file with a progress bar through a lost answer and a dropped connection, then downloads and shares it', async () => {
    const t = fx.t;
    const { page } = await signedIn({ width: 1280, height: 800 }, 'uploader', { drive_storage_bytes: 10_000_000, drive_max_file_bytes: 5_000_000, drive_share_links: true, drive_versioning_depth: 3 });
    const bytes = randomBytes(5 * CHUNK + 1234);

    // Chunk 2's answer is lost after the server stored it; chunk 4's connection drops before it arrives.
    const seen: string[] = [];
    const progressSeen: number[] = [];
    await page.route('**/api/v1/drive_upload/**', async (route: Route) => {
      const req = route.request();
      if (req.method() !== 'PUT') return route.continue();
      const range = req.headers()['content-range'] ?? '';
      seen.push(range);
      progressSeen.push(Number(await page.locator('#upload-progress').evaluate((bar) => (bar as unknown as { value: number }).value)));
      const start = Number(/bytes (\d+)-/.exec(range)?.[1]);
      if (start === CHUNK && seen.filter((r) => r === range).length === 1) {
        await route.fetch();
        return route.abort('connectionreset');
      }
      if (start === 3 * CHUNK && seen.filter((r) => r === range).length === 1) return route.abort('connectionreset');
      return route.continue();
    });

    await page.setInputFiles('#upload-input', { name: 'report 2026.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await page.locator('#upload-panel').waitFor({ state: 'visible' });
    await page.waitForURL(/done=uploaded/, { timeout: 30_000 });
    expect(await page.locator('#done').textContent()).toBe('Upload complete.');

    // Every chunk went once, the two troubled ones twice (the lost answer resumed from received_bytes).
    const starts = seen.map((r) => Number(/bytes (\d+)-/.exec(r)?.[1]) / CHUNK);
    expect(starts).toEqual([0, 1, 2, 3, 3, 4, 5]);
    expect(progressSeen.some((v) => v > 0 && v < bytes.length)).toBe(true);

    const row = page.locator('tr[data-kind=file]', { hasText: 'report 2026.bin' });
    expect(await row.count()).toBe(1);
    const file = await t.services.db.selectFrom('fil_files').innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id').select(['fil_file_id', 'fil_size_bytes', 'fbb_sha256']).where('fil_name', '=', 'report 2026.bin').executeTakeFirstOrThrow();
    expect([Number(file.fil_size_bytes), file.fbb_sha256.trim()]).toEqual([bytes.length, sha256(bytes)]);
    expect(await page.locator('#quota-text').textContent()).toBe('328.9 kB of 10 MB used');

    // Download it.
    const [download] = await Promise.all([page.waitForEvent('download'), row.locator('a.download').click()]);
    expect(download.suggestedFilename()).toBe('report 2026.bin');
    expect(sha256(readFileSync(await download.path()))).toBe(sha256(bytes));

    // Share it by link, with a password; the link works for anyone, once unlocked, until revoked.
    await row.locator('button[data-op=links]').click();
    await page.locator('#links-dialog').waitFor({ state: 'visible' });
    await page.fill('#link-password', 'letmein');
    await page.click('#link-form button[type=submit]');
    await page.locator('#link-created').waitFor({ state: 'visible' });
    const url = (await page.locator('#link-url').textContent())!;
    expect(url).toMatch(new RegExp(`^${t.baseUrl}/s/[0-9a-f]{64}$`));
    await page.locator('#link-list li').waitFor();
    expect(await page.locator('#link-list li').count()).toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-link-1280.png'), fullPage: true });

    const stranger = await (await fx.browser.newContext()).newPage();
    await stranger.goto(url);
    await stranger.fill('input[type=password]', 'letmein');
    const [shared] = await Promise.all([stranger.waitForEvent('download'), stranger.click('main button[type=submit]')]);
    expect(sha256(readFileSync(await shared.path()))).toBe(sha256(bytes));

    await page.locator('#link-list button.link-revoke').click();
    await page.locator('#links-empty').waitFor({ state: 'visible' });
    const gone = await fetch(url);
    expect(gone.status).toBe(404);
    await page.click('#links-dialog [data-close]');

    // A new version from the versions dialog, then the first content restored.
    const second = randomBytes(CHUNK + 10);
    await row.locator('button[data-op=versions]').click();
    await page.locator('#versions-dialog').waitFor({ state: 'visible' });
    expect(await page.locator('#versions-empty').isVisible()).toBe(true);
    await Promise.all([page.waitForURL(/done=uploaded/), page.setInputFiles('#version-input', { name: 'v2.bin', mimeType: 'application/octet-stream', buffer: second })]);
    expect(await page.locator('tr[data-kind=file]', { hasText: 'report 2026.bin' }).locator('.help').textContent()).toBe('(1 earlier)');
    await page.locator('tr[data-kind=file]', { hasText: 'report 2026.bin' }).locator('button[data-op=versions]').click();
    await page.locator('#version-list li').waitFor();
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-versions-1280.png'), fullPage: true });
    await Promise.all([page.waitForURL(/done=version_restored/), page.click('#version-list button.version-restore')]);
    const current = await t.services.db.selectFrom('fil_files').innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id').select('fbb_sha256').where('fil_file_id', '=', file.fil_file_id).executeTakeFirstOrThrow();
    expect(current.fbb_sha256.trim()).toBe(sha256(bytes));

    // Into a new folder through the move dialog.
    await page.fill('#folder-name', 'Archive');
    await Promise.all([page.waitForURL(/done=folder/), page.click('#folder-form button[type=submit]')]);
    await page.locator('tr[data-kind=file]', { hasText: 'report 2026.bin' }).locator('button[data-op=move]').click();
    await page.locator('#move-dialog').waitFor({ state: 'visible' });
    await page.selectOption('#move-target', { label: 'Archive' });
    await Promise.all([page.waitForURL(/done=moved/), page.click('#move-form button[type=submit]')]);
    expect(await page.locator('tr[data-kind=file]').count()).toBe(0);
    await page.click('tr[data-kind=folder] >> text=Archive');
    expect(await page.locator('tr[data-kind=file]', { hasText: 'report 2026.bin' }).count()).toBe(1);
    expect(await page.locator('#crumbs').textContent()).toBe('My files / Archive');

    // The page hashes what it uploads: the same content again is made without sending a byte.
    const putsBefore = seen.length;
    await Promise.all([page.waitForURL(/done=uploaded/), page.setInputFiles('#upload-input', { name: 'copy.bin', mimeType: 'application/octet-stream', buffer: bytes })]);
    expect(seen.length).toBe(putsBefore);
    expect(await page.locator('tr[data-kind=file]', { hasText: 'copy.bin' }).count()).toBe(1);
  });
});
