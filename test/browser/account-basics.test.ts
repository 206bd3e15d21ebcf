import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';

// Account basics in Chromium, at desktop and phone widths: register and land signed in; reset a forgotten
// password through the link in the mail; the profile and password forms with their inline errors.

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describeBrowser('browser: register, forgotten password, profile', () => {
  const fx = useBrowserServer();
  let seq = 0;

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    return (await fx.browser.newContext({ viewport })).newPage();
  }

  async function noHorizontalOverflow(page: Page) {
    const [scroll, client] = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return [root.scrollWidth as number, root.clientWidth as number];
    });
    expect(scroll).toBeLessThanOrEqual(client);
  }

  async function shot(page: Page, name: string) {
    await noHorizontalOverflow(page);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  for (const vp of VIEWPORTS) {
    it(`registers and lands signed in on the plans, or on next (${vp.name})`, async () => {
      const page = await newPage(vp);
      await page.goto(`${fx.t.baseUrl}/register`);
      await page.fill('#usr_first_name', 'Katherine');
      await page.fill('#usr_last_name', 'Johnson');
      await page.fill('#usr_email', `katherine${++seq}@example.com`);
      await page.fill('#password', 'short');
      await page.click('#register-form button[type=submit]');
      await expect.poll(() => page.locator('.field-error[data-for="password"]').textContent()).toBe('must be at least 8 characters');
      await shot(page, `account-register-error-${vp.name}`);
      await page.fill('#password', 'orbital-1962');
      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/pricing`), page.click('#register-form button[type=submit]')]);
      expect(await page.locator('#header-user').textContent()).toBe('Katherine Johnson');
      await shot(page, `account-register-landed-${vp.name}`);

      // From a page that sent the visitor to register, back to it.
      const other = await newPage(vp);
      await other.goto(`${fx.t.baseUrl}/register?next=${encodeURIComponent('/profile')}`);
      await other.fill('#usr_first_name', 'Dorothy');
      await other.fill('#usr_email', `dorothy${++seq}@example.com`);
      await other.fill('#password', 'fortran-1961');
      await Promise.all([other.waitForURL(`${fx.t.baseUrl}/profile`), other.click('#register-form button[type=submit]')]);
      expect(await other.locator('#account-usr_first_name').inputValue()).toBe('Dorothy');
    });

    it(`resets a forgotten password through the emailed link (${vp.name})`, async () => {
      const t = fx.t;
      // The mail's link is BASE_URL's; here that is the test server's own address.
      (t.services.config as { baseUrl: string }).baseUrl = t.baseUrl;
      const u = await t.createUser({ firstName: 'Annie' });
      const page = await newPage(vp);
      await page.goto(`${t.baseUrl}/login`);
      await shot(page, `account-login-${vp.name}`);
      await Promise.all([page.waitForURL(`${t.baseUrl}/password-reset`), page.click('#forgot-password')]);
      await page.fill('#email', u.email);
      await page.click('#reset-request-form button[type=submit]');
      await expect.poll(() => page.locator('#reset-request-form .form-status').textContent()).toBe(
        'If an account exists for that email address, a link to reset its password is on its way.',
      );
      await shot(page, `account-reset-requested-${vp.name}`);

      const mail = await t.services.db.selectFrom('mob_mail_outbox').select('mob_text').where('mob_to', '=', u.email).orderBy('mob_mail_outbox_id', 'desc').executeTakeFirstOrThrow();
      const link = new RegExp(`${t.baseUrl}/password-reset\\?act_code=[0-9a-f]{48}`).exec(mail.mob_text)?.[0];
      expect(link).toBeDefined();
      await page.goto(link!);
      // The code is in the form, no longer in the address bar.
      expect(page.url()).toBe(`${t.baseUrl}/password-reset`);
      await page.fill('#password', 'fresh-start-1');
      await page.fill('#password_confirm', 'fresh-start-2');
      await page.click('#reset-password-form button[type=submit]');
      await expect.poll(() => page.locator('.field-error[data-for="password_confirm"]').textContent()).toBe('does not match the password');
      await shot(page, `account-reset-new-password-${vp.name}`);
      await page.fill('#password_confirm', 'fresh-start-1');
      await Promise.all([page.waitForURL(`${t.baseUrl}/login?done=password_reset`), page.click('#reset-password-form button[type=submit]')]);
      expect(await page.locator('#login-done').textContent()).toBe('Your password has been changed. Sign in with your new password.');

      await page.fill('#email', u.email);
      await page.fill('#password', 'fresh-start-1');
      await Promise.all([page.waitForURL(`${t.baseUrl}/`), page.click('main button[type=submit]')]);
      expect(await page.locator('main').textContent()).toContain(u.email);

      // The link is spent.
      const again = await newPage(vp);
      await again.goto(link!);
      expect(await again.locator('#reset-link-invalid').isVisible()).toBe(true);
      await shot(again, `account-reset-link-invalid-${vp.name}`);
    });

    it(`edits the profile and the password with inline errors (${vp.name})`, async () => {
      const t = fx.t;
      const u = await t.createUser({ firstName: 'Mary', lastName: 'Jackson' });
      const page = await newPage(vp);
      await page.goto(`${t.baseUrl}/login?next=%2Fprofile`);
      await page.fill('#email', u.email);
      await page.fill('#password', u.password);
      await Promise.all([page.waitForURL(`${t.baseUrl}/profile`), page.click('main button[type=submit]')]);
      await page.fill('#account-usr_email', 'not-an-email');
      await page.click('#account-form button[type=submit]');
      await expect.poll(() => page.locator('#account-usr_email-error').textContent()).toBe('must be a valid email address');
      await shot(page, `account-profile-error-${vp.name}`);
      await page.fill('#account-usr_email', `mary${++seq}@example.com`);
      await page.fill('#account-usr_nickname', 'Mary J.');
      await Promise.all([page.waitForURL(`${t.baseUrl}/profile?done=account`), page.click('#account-form button[type=submit]')]);
      expect(await page.locator('#profile-done').textContent()).toBe('Your profile has been saved.');
      await page.fill('#address-usa_address1', '1 Langley Way');
      await page.fill('#address-usa_city', 'Hampton');
      await Promise.all([page.waitForURL(`${t.baseUrl}/profile?done=address`), page.click('#address-form button[type=submit]')]);
      expect(await page.locator('#address-usa_city').inputValue()).toBe('Hampton');
      await shot(page, `account-profile-${vp.name}`);

      await page.goto(`${t.baseUrl}/profile/security`);
      await page.fill('#current_password_change', 'wrong-password');
      await page.fill('#new_password', 'wind-tunnel-1');
      await page.click('#password-form button[type=submit]');
      await expect.poll(() => page.locator('#password-form .field-error[data-for="current_password"]').textContent()).toBe('is incorrect');
      await shot(page, `account-security-error-${vp.name}`);
      await page.fill('#current_password_change', u.password);
      await Promise.all([page.waitForURL(`${t.baseUrl}/profile/security?done=password`), page.click('#password-form button[type=submit]')]);
      expect(await page.locator('#password-done').textContent()).toBe('Your password has been changed.');
    });
  }
});
