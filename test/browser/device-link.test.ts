import path from 'node:path';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

describeBrowser('browser: device-link approval page', () => {
  const fx = useBrowserServer();

  it('a signed-in member opens verify_url, sees the device, approves it, and the device receives its key', async () => {
    const u = await fx.t.createUser();
    const started = await fx.t.request({ method: 'POST', url: '/api/v1/auth/device_link', payload: { device_name: 'Studio iMac', platform: 'macos' } });
    const { link_code: code, poll_token: token, verify_url: verifyUrl } = started.json.data;
    const page = await (await fx.browser.newContext()).newPage();
    // verify_url sends a signed-out visitor through sign-in and back.
    await page.goto(`${fx.t.baseUrl}${new URL(verifyUrl).pathname}${new URL(verifyUrl).search}`);
    await page.waitForURL(/\/login\?next=/);
    await page.fill('#email', u.email);
    await page.fill('#password', u.password);
    await Promise.all([page.waitForURL(/\/device\?code=/), page.click('main button[type=submit]')]);
    expect(await page.locator('#device-name').textContent()).toBe('Studio iMac');
    expect(await page.locator('main').textContent()).toContain('macOS');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-approval.png'), fullPage: true });
    expect((await fx.t.request({ method: 'GET', url: `/api/v1/auth/device_link/${token}` })).json.data.status).toBe('pending');
    await page.click('button[value=approve]');
    expect(await page.locator('#device-result').textContent()).toContain('Studio iMac is now linked');
    const delivered = await fx.t.request({ method: 'GET', url: `/api/v1/auth/device_link/${token}` });
    expect(delivered.json.data.status).toBe('approved');
    expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
  });
});
