import { createServer } from 'node:net';
import path from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import { SCREENSHOT_DIR, launchBrowser } from './browser.js';

/** A free loopback port: BASE_URL (the relying party) must name it before the app starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Chromium's virtual authenticator: a platform authenticator with resident keys, user verification and PRF. */
export async function addAuthenticator(cdp: CDPSession): Promise<string> {
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

export interface WebAuthnFixture {
  t: TestApp;
  /** http://localhost:PORT: WebAuthn needs a domain for its relying-party id, never an IP address. */
  base: string;
  browser: Browser;
}

/** A test app on http://localhost (its BASE_URL) and a browser, for the suite's tests. */
export function useWebAuthnBrowserServer(): WebAuthnFixture {
  const fx = {} as WebAuthnFixture;
  beforeAll(async () => {
    const port = await freePort();
    fx.base = `http://localhost:${port}`;
    fx.t = await createTestApp({ start: new Date(), config: { baseUrl: fx.base } });
    await fx.t.app.listen({ host: '127.0.0.1', port });
    fx.browser = await launchBrowser();
  });
  afterAll(async () => {
    await fx.browser?.close();
    await fx.t?.close();
  });
  return fx;
}

/** Screenshots at 1280x800 and 390x844, each checked for horizontal overflow. */
export async function screenshotsWithoutOverflow(page: Page, name: string): Promise<void> {
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
