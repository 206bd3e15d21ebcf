import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Route } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

// Issue 35 item 9, the page's half: /drive's uploader kept its token only in memory, gave up after about
// 7.5 s of 409 chunk_in_progress, and completed with one POST without an Idempotency-Key. Now an upload
// under way survives a reload (token in sessionStorage; the page offers to continue from the server's
// offset), waits as long as the server says, and completes with an Idempotency-Key that a lost answer
// is asked again with.

const CHUNK = 64 * 1024;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-drive-resume-'));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describeBrowser('browser: Drive uploads that resume', () => {
  const fx = useBrowserServer({ config: { dataDir }, settings: { drive_active: true, drive_upload_chunk_bytes: CHUNK } });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function signedIn(tierName: string) {
    const t = fx.t;
    const tier = await createTier(t, { name: tierName, displayName: tierName, level: 30 + tierName.length, features: { drive_storage_bytes: 10 * 1024 ** 2, drive_max_file_bytes: 5 * 1024 ** 2, drive_share_links: true, drive_versioning_depth: 3 } });
    const u = await t.createUser();
    await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    const page = await (await fx.browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`${t.baseUrl}/login?next=%2Fdrive`);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/drive`), page.click('main button[type=submit]')]);
    return { page, user: u };
  }

  const fileRow = (name: string) =>
    fx.t.services.db
      .selectFrom('fil_files')
      .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
      .select(['fil_file_id', 'fil_size_bytes', 'fbb_sha256'])
      .where('fil_name', '=', name)
      .where('fil_delete_time', 'is', null)
      .execute();

  it('continues an upload after a reload from the server\'s offset, once the same file is chosen again', async () => {
    const { page } = await signedIn('resumer');
    const bytes = randomBytes(5 * CHUNK + 321);
    const starts: number[] = [];
    let held: Route | null = null;
    let reloaded = false;
    await page.route('**/api/v1/drive_upload/**', async (route: Route) => {
      const req = route.request();
      if (req.method() !== 'PUT') return route.continue();
      const start = Number(/bytes (\d+)-/.exec(req.headers()['content-range'] ?? '')?.[1]);
      starts.push(start / CHUNK);
      // The third chunk never gets an answer before the member reloads the page.
      if (start === 2 * CHUNK && !reloaded) {
        held = route;
        return;
      }
      return route.continue();
    });
    await page.setInputFiles('#upload-input', { name: 'big video.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await expect.poll(() => held !== null, { timeout: 15_000 }).toBe(true);
    const kept = await page.evaluate(() => (globalThis as any).sessionStorage.getItem('gatehouse.drive.uploads'));
    expect(JSON.parse(kept)).toEqual([expect.objectContaining({ name: 'big video.bin', size: bytes.length, token: expect.stringMatching(/^[0-9a-f]{64}$/), key: expect.any(String) })]);

    reloaded = true;
    await page.reload();
    await (held as unknown as Route).abort().catch(() => {});
    const offer = page.locator('#resume-list li');
    await offer.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#resume-panel').isVisible()).toBe(true);
    expect(await offer.locator('.resume-text').textContent()).toBe('big video.bin stopped at 39% (131.1 kB of 328 kB). Choose the same file to continue: ');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'drive-resume-1280.png'), fullPage: true });

    // Another file is refused; the same one continues from byte 128 KiB, and the upload finishes.
    await offer.locator('input.resume-input').setInputFiles({ name: 'other.bin', mimeType: 'application/octet-stream', buffer: randomBytes(10) });
    await page.locator('#result', { hasText: 'That is not the same file: choose big video.bin (328 kB).' }).waitFor();
    const before = starts.length;
    await Promise.all([
      page.waitForURL(/done=uploaded/, { timeout: 30_000 }),
      offer.locator('input.resume-input').setInputFiles({ name: 'big video.bin', mimeType: 'application/octet-stream', buffer: bytes }),
    ]);
    expect(starts.slice(before)).toEqual([2, 3, 4, 5]);
    const rows = await fileRow('big video.bin');
    expect(rows.map((r) => [Number(r.fil_size_bytes), r.fbb_sha256.trim()])).toEqual([[bytes.length, sha256(bytes)]]);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('gatehouse.drive.uploads'))).toBe('[]');
    expect(await page.locator('#resume-panel').isVisible()).toBe(false);
  });

  it('waits out chunk_in_progress as long as the server says, and completes with an Idempotency-Key asked again after a lost answer', async () => {
    const { page } = await signedIn('waiter');
    const bytes = randomBytes(2 * CHUNK + 5);
    const putTimes: Array<{ start: number; at: number }> = [];
    let refusals = 0;
    await page.route('**/api/v1/drive_upload/**', async (route: Route) => {
      const req = route.request();
      if (req.method() !== 'PUT') return route.continue();
      const start = Number(/bytes (\d+)-/.exec(req.headers()['content-range'] ?? '')?.[1]);
      putTimes.push({ start, at: Date.now() });
      // A dead server's lease on the second chunk: 3 refusals of 3 s each, longer than the old 7.5 s.
      if (start === CHUNK && refusals < 3) {
        refusals++;
        return route.fulfill({
          status: 409,
          headers: { 'content-type': 'application/json', 'retry-after': '3' },
          body: JSON.stringify({ errortype: 'ActionError', error: 'Another chunk of this upload is being received', data: { reason: 'chunk_in_progress', received_bytes: CHUNK, expected_bytes: bytes.length, retry_after: 3 } }),
        });
      }
      return route.continue();
    });
    const keys: string[] = [];
    await page.route('**/api/v1/action/drive_upload_complete', async (route: Route) => {
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      // The first completion is done by the server, but its answer is lost.
      if (keys.length === 1) {
        await route.fetch();
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    await page.setInputFiles('#upload-input', { name: 'patient.bin', mimeType: 'application/octet-stream', buffer: bytes });
    await page.waitForURL(/done=uploaded/, { timeout: 60_000 });

    const second = putTimes.filter((p) => p.start === CHUNK);
    expect(second).toHaveLength(4);
    for (let i = 1; i < second.length; i++) expect(second[i]!.at - second[i - 1]!.at).toBeGreaterThanOrEqual(2900);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-zA-Z-]{16,}$/);
    expect(keys[1]).toBe(keys[0]);
    const rows = await fileRow('patient.bin');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.fbb_sha256.trim()).toBe(sha256(bytes));
  });
});
