import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';

export const chromiumPath = process.env.GATEHOUSE_CHROMIUM;

/** describe() for browser tests: skipped, saying so, when Chromium is not installed. */
export const describeBrowser = chromiumPath ? describe : describe.skip;

export const SCREENSHOT_DIR = path.resolve('test-results', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A test app listening on a real 127.0.0.1 socket, for the browser to load. */
export async function startServer(opts: TestAppOptions = {}): Promise<TestApp & { baseUrl: string }> {
  const t = await createTestApp(opts);
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return Object.assign(t, { baseUrl: address });
}

/**
 * A browser test's fixtures: a test app on a real socket (clock started at the real time, since the
 * browser's cookies expire by it) and a Chromium, started before the suite's tests and closed after.
 */
export function useBrowserServer(opts: TestAppOptions = {}): { t: TestApp & { baseUrl: string }; browser: Browser } {
  const fixtures = {} as { t: TestApp & { baseUrl: string }; browser: Browser };
  beforeAll(async () => {
    fixtures.t = await startServer({ start: new Date(), ...opts });
    fixtures.browser = await launchBrowser();
  });
  afterAll(async () => {
    await fixtures.browser?.close();
    await fixtures.t?.close();
  });
  return fixtures;
}
