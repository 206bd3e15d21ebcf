import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

describeBrowser('browser: API keys, subscription settings and app sessions screens', () => {
  const fx = useBrowserServer();

  async function signInPage(email: string, password: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  it('staff create a machine key, use its secret once, revoke it and the API refuses it', async () => {
    const staff = await fx.t.createUser({ permission: 5 });
    const owner = await fx.t.createUser();
    const page = await signInPage(staff.email, staff.password);
    await page.goto(`${fx.t.baseUrl}/admin/api-keys`);
    await page.fill('#owner_email', owner.email);
    await page.selectOption('#permission', '1');
    await page.fill('#name', 'Dashboard');
    await page.click('text=Create key');
    const publicKey = (await page.locator('#new-public-key').textContent())!;
    const secretKey = (await page.locator('#new-secret-key').textContent())!;
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-api-keys.png'), fullPage: true });
    const ok = await fx.t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } });
    expect(ok.statusCode).toBe(200);
    await page.goto(`${fx.t.baseUrl}/admin/api-keys`);
    expect(await page.content()).not.toContain(secretKey);
    await page.click(`tr[data-key="${publicKey}"] button[data-action=revoke]`);
    expect(await page.locator(`tr[data-key="${publicKey}"] .state`).textContent()).toBe('revoked');
    const refused = await fx.t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: publicKey, secret_key: secretKey } });
    expect(refused.statusCode).toBe(401);
  });

  it('staff change a subscription setting; a bad value is shown next to its field', async () => {
    const staff = await fx.t.createUser({ permission: 5 });
    const page = await signInPage(staff.email, staff.password);
    await page.goto(`${fx.t.baseUrl}/admin/settings/subscriptions`);
    await page.fill('#tier_gate_preview_length', '-1');
    await page.click('text=Save settings');
    expect(await page.locator('#tier_gate_preview_length-error').textContent()).toMatch(/at least 0/);
    await page.uncheck('#subscription_reactivation_enabled');
    await page.fill('#tier_gate_preview_length', '200');
    await page.selectOption('#subscription_downgrade_timing', 'immediate');
    await page.click('text=Save settings');
    expect(await page.locator('#settings-saved').textContent()).toContain('Settings saved');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'admin-subscription-settings.png'), fullPage: true });
    expect(fx.t.services.settings.bool('subscription_reactivation_enabled')).toBe(false);
    expect(fx.t.services.settings.int('tier_gate_preview_length')).toBe(200);
    expect(fx.t.services.settings.string('subscription_downgrade_timing')).toBe('immediate');
  });

  it('a member revokes an app session on a phone-sized screen and the key stops working', async () => {
    const m = await fx.t.createUser();
    const login = await fx.t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: m.email, password: m.password, device_label: 'iPad kitchen' } });
    const headers = { public_key: login.json.data.public_key, secret_key: login.json.data.secret_key };
    const page = await signInPage(m.email, m.password, { width: 390, height: 844 });
    await page.goto(`${fx.t.baseUrl}/profile/app-sessions`);
    expect(await page.locator('#app-sessions').textContent()).toContain('iPad kitchen');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'profile-app-sessions-phone.png'), fullPage: true });
    await page.click('#app-sessions button');
    expect(await page.locator('main').textContent()).toContain('No apps are signed in');
    expect((await fx.t.request({ method: 'GET', url: '/api/v1/auth/session', headers })).statusCode).toBe(401);
  });
});
