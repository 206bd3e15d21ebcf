import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { success } from '../../src/http/envelope.js';
import { businessError } from '../../src/http/errors.js';
import type { TestApp } from '../helpers/app.js';
import { SCREENSHOT_DIR, describeBrowser, launchBrowser, startServer } from '../helpers/browser.js';

describeBrowser('browser: sign-in and the shared serviceApi client', () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;

  beforeAll(async () => {
    t = await startServer({
      start: new Date(),
      extraApiRoutes: (api) => {
        // A probe action-like endpoint: succeeds, or fails with a business error on request.
        api.post('/__probe/echo', { config: { feature: 'action' } }, async (request) => {
          const body = (request.body ?? {}) as { fail?: boolean; note?: string };
          if (body.fail) throw businessError('The probe was asked to fail');
          return success({ user_id: request.principal!.user!.usr_user_id, note: body.note ?? null });
        });
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in, reads the meta token, calls the API through serviceApi (success and a 422), recovers a stale token once, signs out', async () => {
    const { userId, email, password } = await t.createUser({ firstName: 'Rosa', lastName: 'Parks' });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/login`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'sign-in.png'), fullPage: true });
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${t.baseUrl}/`), page.click('button[type=submit]')]);
    expect(await page.locator('main').textContent()).toContain(email);

    const meta = await page.locator('meta[name="service-api-csrf"]').getAttribute('content');
    const cookies = await context.cookies();
    expect(meta).toBe(cookies.find((c) => c.name === 'service_api_csrf')?.value);
    expect(await page.evaluate(() => (globalThis as any).serviceApi.csrf())).toBe(meta);

    const ok = await page.evaluate(() => (globalThis as any).serviceApi.post('/api/v1/__probe/echo', { note: 'hi' }));
    expect(ok).toEqual({ user_id: userId, note: 'hi' });

    const failed = await page.evaluate(() =>
      (globalThis as any).serviceApi.post('/api/v1/__probe/echo', { fail: true }).then(
        () => null,
        (e: any) => ({ status: e.status, errorType: e.errorType, message: e.message }),
      ),
    );
    expect(failed).toEqual({ status: 422, errorType: 'ActionError', message: 'The probe was asked to fail' });

    // Another tab signs in again: the server rotates the session and its token. This tab still holds the
    // old token, gets a 403, re-reads the mirror cookie and retries once, successfully.
    const other = await context.newPage();
    await other.goto(`${t.baseUrl}/`);
    await Promise.all([other.waitForURL(/\/login$/), other.click('header button[type=submit]')]);
    await other.fill('#email', email);
    await other.fill('#password', password);
    await Promise.all([other.waitForURL(`${t.baseUrl}/`), other.click('main button[type=submit]')]);
    const rotated = (await context.cookies()).find((c) => c.name === 'service_api_csrf')?.value;
    expect(rotated).not.toBe(meta);
    const calls: number[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/__probe/echo')) calls.push(r.status());
    });
    const retried = await page.evaluate(() => (globalThis as any).serviceApi.post('/api/v1/__probe/echo', { note: 'after rotation' }));
    expect(retried).toEqual({ user_id: userId, note: 'after rotation' });
    expect(calls).toEqual([403, 200]);
    expect(await page.evaluate(() => (globalThis as any).serviceApi.csrf())).toBe(rotated);

    // Sign out from a freshly rendered page (the old page's sign-out form token died with the rotation).
    await page.goto(`${t.baseUrl}/`);
    await Promise.all([page.waitForURL(/\/login$/), page.click('header button[type=submit]')]);
    const after = await page.evaluate(() =>
      (globalThis as any).serviceApi.post('/api/v1/__probe/echo', {}).then(
        () => null,
        (e: any) => e.status,
      ),
    );
    expect(after).toBe(401);
    await context.close();
  });
});
