import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';
import { screenshotsWithoutOverflow } from '../helpers/webauthn-browser.js';

// A sealed Drive folder in Chromium (issue 27): the vault set up on /profile/security, a sealed folder
// made and a file uploaded into it on /drive, the file downloaded while unlocked; after locking, the page
// shows a locked placeholder and the unlock prompt, the download answers 423, and unlocking with a
// recovery code (following the prompt's link) brings the name and the bytes back.

const CHUNK = 64 * 1024;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-drive-sealed-browser-'));

describeBrowser('browser: sealed Drive folders', () => {
  const fx = useBrowserServer({ config: { dataDir }, settings: { drive_active: true, drive_upload_chunk_bytes: CHUNK } });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('makes a sealed folder, uploads into it, shows locked placeholders and 423 while locked, and reads back after unlock', async () => {
    const t = fx.t;
    const tier = await createTier(t, { name: 'sealedplan', displayName: 'Sealed', level: 40, features: { drive_storage_bytes: 1024 ** 3, drive_max_file_bytes: 1024 ** 2 * 50, drive_share_links: true, drive_versioning_depth: 3 } });
    const u = await t.createUser();
    await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    const context = await fx.browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${t.baseUrl}/login?next=%2Fdrive`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/drive`), page.click('main button[type=submit]')]);

    // Without a vault the folder form offers to set one up instead of a sealed choice.
    expect(await page.locator('#folder-sealed').count()).toBe(0);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security#vault`), page.click('#vault-setup-link')]);
    await page.fill('#vault_setup_password', u.password);
    await page.check('#vault_ack');
    await page.click('#vault-setup-form button[type=submit]');
    await page.locator('#vault-codes').waitFor({ state: 'visible' });
    const codes = (await page.locator('#vault-code-list li').allTextContents()).map((c) => c.replace(/-/g, ''));
    expect(codes).toHaveLength(10);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security`), page.click('#vault-codes-done')]);

    await page.goto(`${t.baseUrl}/drive`);
    await page.fill('#folder-name', 'Medical records');
    await page.check('#folder-sealed');
    await Promise.all([page.waitForURL(/done=folder/), page.click('#folder-form button[type=submit]')]);
    const folderRow = page.locator('tr[data-kind=folder]', { hasText: 'Medical records' });
    expect(await folderRow.locator('.sealed-tag').textContent()).toBe('Sealed');
    expect(await folderRow.locator('button[data-op=share]').count()).toBe(0);
    expect(await page.locator('#folder-sealed').count()).toBe(1);
    await screenshotsWithoutOverflow(page, 'drive-sealed-root');
    await Promise.all([page.waitForURL(/folder=\d+/), folderRow.locator('a').click()]);
    const folderUrl = page.url();
    expect(await page.locator('.upload-label').textContent()).toContain('Upload sealed files');

    const bytes = Buffer.alloc(3 * CHUNK + 500);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + 3) % 251;
    await Promise.all([page.waitForURL(/done=uploaded/), page.setInputFiles('#upload-input', { name: 'blood test 2026.pdf', mimeType: 'application/pdf', buffer: bytes })]);
    const fileRow = page.locator('tr[data-kind=file]', { hasText: 'blood test 2026.pdf' });
    expect(await fileRow.count()).toBe(1);
    expect(await fileRow.locator('button[data-op=links]').count()).toBe(0);
    const [download] = await Promise.all([page.waitForEvent('download'), fileRow.locator('a.download').click()]);
    expect(readFileSync((await download.path())!).equals(bytes)).toBe(true);
    expect(download.suggestedFilename()).toBe('blood test 2026.pdf');
    await screenshotsWithoutOverflow(page, 'drive-sealed-open');
    const fileId = await fileRow.getAttribute('data-id');

    // Lock from the security page; the Drive shows a placeholder and the way back.
    await page.goto(`${t.baseUrl}/profile/security`);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security`), page.click('#vault-lock')]);
    await page.locator('#vault[data-state="locked"]').waitFor();
    await page.goto(folderUrl);
    const locked = page.locator(`tr[data-kind=file][data-id="${fileId}"]`);
    expect(await locked.getAttribute('data-locked')).toBe('1');
    expect(await locked.locator('.locked-name').textContent()).toBe('Locked file');
    expect(await page.content()).not.toContain('blood test');
    expect(await page.locator('#upload-input').count()).toBe(0);
    await page.locator('#vault-prompt').waitFor();
    await screenshotsWithoutOverflow(page, 'drive-sealed-locked');
    const refused = await page.request.get(`${t.baseUrl}/drive/file/${fileId}`);
    expect(refused.status()).toBe(423);
    expect(await refused.text()).toContain('This file is sealed');

    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security#vault`), page.click('#vault-unlock-link')]);
    await page.fill('#vault_code', codes[0]!);
    await page.fill('#vault_code_password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security`), page.click('#vault-unlock-recovery-form button[type=submit]')]);
    await page.locator('#vault[data-state="open"]').waitFor();
    await page.goto(folderUrl);
    expect(await page.locator('#vault-prompt').count()).toBe(0);
    const back = page.locator('tr[data-kind=file]', { hasText: 'blood test 2026.pdf' });
    const again = await page.request.get(`${t.baseUrl}/drive/file/${fileId}`);
    expect(again.status()).toBe(200);
    expect(Buffer.from(await again.body()).equals(bytes)).toBe(true);
    expect(await back.count()).toBe(1);
    await context.close();
  }, 120_000);
});
