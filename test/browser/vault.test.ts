import { expect, it } from 'vitest';
import { describeBrowser } from '../helpers/browser.js';
import { addAuthenticator, screenshotsWithoutOverflow, useWebAuthnBrowserServer } from '../helpers/webauthn-browser.js';

describeBrowser('browser: the sealed vault on the security page', () => {
  const fx = useWebAuthnBrowserServer();

  it('sets up with a PRF passkey, shows the codes once, locks, and unlocks by passkey, recovery code and passphrase', async () => {
    const { email, password } = await fx.t.createUser({ firstName: 'Ada', lastName: 'Lovelace' });
    const context = await fx.browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await addAuthenticator(cdp);

    await page.goto(`${fx.base}/login?next=/profile/security`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('form[action="/login"] button[type=submit]')]);
    await page.fill('#current_password', password);
    await Promise.all([page.waitForURL(`${fx.base}/profile/security?done=added`), page.click('#add-passkey-button')]);

    // Setup: refused without the acknowledgement, then the codes once.
    await page.fill('#vault_setup_password', password);
    await page.fill('#vault_setup_passphrase', 'a long vault passphrase');
    await page.click('#vault-setup-form button[type=submit]');
    await expect.poll(() => page.locator('#vault-status').textContent()).toContain('acknowledge loss');
    await page.check('#vault_ack');
    await page.click('#vault-setup-form button[type=submit]');
    await page.locator('#vault-codes').waitFor({ state: 'visible' });
    const codes = (await page.locator('#vault-code-list li').allTextContents()).map((c) => c.replace(/-/g, ''));
    expect(codes).toHaveLength(10);
    expect(await page.locator('#vault-codes-download').getAttribute('href')).toMatch(/^blob:/);
    await screenshotsWithoutOverflow(page, 'vault-codes');
    await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('#vault-codes-done')]);
    expect(await page.locator('#vault').getAttribute('data-state')).toBe('open');
    await screenshotsWithoutOverflow(page, 'vault-open');

    const lock = async () => {
      await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('#vault-lock')]);
      await page.locator('#vault[data-state="locked"]').waitFor();
    };
    await lock();
    await screenshotsWithoutOverflow(page, 'vault-locked');
    await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('#vault-unlock-passkey')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    await lock();
    await page.fill('#vault_code', codes[0]!);
    await page.fill('#vault_code_password', password);
    await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('#vault-unlock-recovery-form button[type=submit]')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    await lock();
    await page.fill('#vault_code', codes[0]!);
    await page.fill('#vault_code_password', password);
    await page.click('#vault-unlock-recovery-form button[type=submit]');
    await expect.poll(() => page.locator('#vault-status').textContent()).toBe('This recovery code is not valid');

    await page.fill('#vault_passphrase', 'a long vault passphrase');
    await page.fill('#vault_passphrase_password', password);
    await Promise.all([page.waitForURL(`${fx.base}/profile/security`), page.click('#vault-unlock-passphrase-form button[type=submit]')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    // The presence beacon on another signed-in page: a heartbeat about every 25 s, none after the window closed.
    const beats: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/action/vault_heartbeat')) beats.push(r.url());
    });
    await page.clock.install();
    await page.goto(`${fx.base}/profile/subscription`);
    // The first beat's answer must be in before the lock: answered after it, it would read {alive: false}
    // and stop the beacon before the second beat (seen under load on PostgreSQL).
    const firstAnswer = page.waitForResponse((r) => r.url().endsWith('/action/vault_heartbeat'), { timeout: 15_000 });
    await page.clock.runFor(26_000);
    // Real time for the server's answers (expect.poll's default is one second; CI runs many files at once).
    await expect.poll(() => beats.length, { timeout: 15_000 }).toBe(1);
    await firstAnswer;
    await page.evaluate(() => (globalThis as any).serviceApi.post('vault_lock', {}));
    await page.clock.runFor(25_000);
    await expect.poll(() => beats.length, { timeout: 15_000 }).toBe(2);
    // The beacon stops once that beat's answer ({alive: false}) is in; the fake clock must not run ahead of it.
    await expect.poll(() => page.evaluate(() => (globalThis as any).sessionStorage.getItem('gatehouse-vault-open')), { timeout: 15_000 }).toBeNull();
    await page.clock.runFor(120_000);
    await page.evaluate(() => (globalThis as any).serviceApi.post('vault_status', {}));
    expect(beats).toHaveLength(2);
    await context.close();
  });
});
