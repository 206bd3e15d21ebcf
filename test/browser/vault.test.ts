import { createServer } from 'node:net';
import path from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { SCREENSHOT_DIR, describeBrowser, launchBrowser } from '../helpers/browser.js';

/** A free loopback port: BASE_URL (the relying party) must name it before the app starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Chromium's virtual authenticator: a platform authenticator with resident keys, user verification and PRF. */
async function addAuthenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      hasPrf: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}

describeBrowser('browser: the sealed vault on the security page', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    t = await createTestApp({ start: new Date(), config: { baseUrl: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function screenshots(page: Page, name: string) {
    for (const [width, height] of [[1280, 800], [390, 844]] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
      const overflow = await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement;
        return (root.scrollWidth as number) - (root.clientWidth as number);
      });
      expect([name, width, overflow]).toEqual([name, width, 0]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('sets up with a PRF passkey, shows the codes once, locks, and unlocks by passkey, recovery code and passphrase', async () => {
    const { email, password } = await t.createUser({ firstName: 'Ada', lastName: 'Lovelace' });
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await addAuthenticator(cdp);

    await page.goto(`${base}/login?next=/profile/security`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('form[action="/login"] button[type=submit]')]);
    await page.fill('#current_password', password);
    await Promise.all([page.waitForURL(`${base}/profile/security?done=added`), page.click('#add-passkey-button')]);

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
    await screenshots(page, 'vault-codes');
    await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('#vault-codes-done')]);
    expect(await page.locator('#vault').getAttribute('data-state')).toBe('open');
    await screenshots(page, 'vault-open');

    const lock = async () => {
      await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('#vault-lock')]);
      await page.locator('#vault[data-state="locked"]').waitFor();
    };
    await lock();
    await screenshots(page, 'vault-locked');
    await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('#vault-unlock-passkey')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    await lock();
    await page.fill('#vault_code', codes[0]!);
    await page.fill('#vault_code_password', password);
    await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('#vault-unlock-recovery-form button[type=submit]')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    await lock();
    await page.fill('#vault_code', codes[0]!);
    await page.fill('#vault_code_password', password);
    await page.click('#vault-unlock-recovery-form button[type=submit]');
    await expect.poll(() => page.locator('#vault-status').textContent()).toBe('This recovery code is not valid');

    await page.fill('#vault_passphrase', 'a long vault passphrase');
    await page.fill('#vault_passphrase_password', password);
    await Promise.all([page.waitForURL(`${base}/profile/security`), page.click('#vault-unlock-passphrase-form button[type=submit]')]);
    await page.locator('#vault[data-state="open"]').waitFor();

    // The presence beacon on another signed-in page: a heartbeat about every 25 s, none after the window closed.
    const beats: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/action/vault_heartbeat')) beats.push(r.url());
    });
    await page.clock.install();
    await page.goto(`${base}/profile/subscription`);
    await page.clock.runFor(26_000);
    await expect.poll(() => beats.length).toBe(1);
    await page.evaluate(() => (globalThis as any).serviceApi.post('vault_lock', {}));
    await page.clock.runFor(25_000);
    await expect.poll(() => beats.length).toBe(2);
    await page.clock.runFor(120_000);
    await page.evaluate(() => (globalThis as any).serviceApi.post('vault_status', {}));
    expect(beats).toHaveLength(2);
    await context.close();
  });
});
