import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SECRET = 'The harbour plan moves to phase two in March.';
const IMAGE = 'https://images.example.com/harbour.svg';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="600"><rect width="1200" height="600" fill="#2d6a8f"/><circle cx="900" cy="180" r="90" fill="#f4d35e"/><rect y="420" width="1200" height="180" fill="#1b3b52"/></svg>';

describeBrowser('browser: staff write and publish a gated post; readers see it by tier', () => {
  const fx = useBrowserServer({ settings: { tier_gate_preview_length: 60 } });

  /** A browser context whose https image requests are answered here (the test has no network). */
  async function context(viewport: { width: number; height: number }): Promise<BrowserContext> {
    const ctx = await fx.browser.newContext({ viewport });
    await ctx.route('https://images.example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: SVG }));
    return ctx;
  }

  async function signedIn(email: string, password: string, viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await context(viewport)).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
  const overflow = (page: Page) => page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return (root.scrollWidth as number) - (root.clientWidth as number);
    });

  it('a new owner writes a Gold post with the editor, publishes it, and each kind of reader sees the right thing at 1280 and 390 px', { timeout: 180_000 }, async () => {
    await createTier(fx.t, { name: 'gold', displayName: 'Gold', level: 20 });
    const owner = await fx.t.createUser({ permission: 10, firstName: 'Olive', lastName: 'Owner' });
    const reader = await fx.t.createUser();
    const member = await fx.t.createUser();
    const goldTier = await fx.t.services.db.selectFrom('sbt_subscription_tiers').select('sbt_subscription_tier_id').where('sbt_name', '=', 'gold').executeTakeFirstOrThrow();
    await fx.t.services.tiers.membership.assignManually(member.userId, goldTier.sbt_subscription_tier_id, null);

    // The owner finds Posts in the admin navigation and writes the post.
    const admin = await signedIn(owner.email, owner.password, DESKTOP);
    await admin.goto(`${fx.t.baseUrl}/admin`);
    await Promise.all([admin.waitForURL(`${fx.t.baseUrl}/admin/posts`), admin.click('nav.sub a[href="/admin/posts"]')]);
    await Promise.all([admin.waitForURL(`${fx.t.baseUrl}/admin/posts/new`), admin.click('#new-post')]);
    await admin.fill('#title', 'Harbour plan: the next phase');
    await admin.fill('#body', `The council met on Tuesday and agreed the **harbour plan** in full.\n\n## What changes\n\n- The quay reopens\n- Boats return\n\n${SECRET} Read the [minutes](https://example.org/minutes).`);
    await admin.fill('#excerpt', 'What the council agreed on Tuesday, and what comes next.');
    await admin.fill('#feature_image', IMAGE);
    await admin.selectOption('#tier_level', '20');
    // A refusal first: a schedule time in the past is refused next to its field.
    await admin.check('#status-schedule');
    await admin.fill('#publish_at', '2020-01-01T09:00');
    await Promise.all([admin.waitForLoadState('load'), admin.click('button:has-text("Create post")')]);
    expect(await admin.locator('#publish_at-error').textContent()).toBe('Choose a time in the future, or choose Publish now.');
    expect(await admin.inputValue('#title')).toBe('Harbour plan: the next phase');
    await admin.check('#status-publish');
    await Promise.all([admin.waitForURL(/\/admin\/posts\/\d+$/), admin.click('button:has-text("Create post")')]);
    expect(await admin.locator('#post-saved').textContent()).toBe('Post created, published.');
    await shot(admin, 'admin-post-edit-1280.png');
    const id = Number(/\/admin\/posts\/(\d+)$/.exec(admin.url())![1]);

    await admin.goto(`${fx.t.baseUrl}/admin/posts`);
    expect(await admin.locator(`tr[data-post="${id}"] .status`).textContent()).toContain('Published');
    expect(await admin.locator(`tr[data-post="${id}"] .gate`).textContent()).toBe('Gold and higher');
    await shot(admin, 'admin-posts-list-1280.png');

    for (const [label, viewport] of [['1280', DESKTOP], ['390', PHONE]] as const) {
      // Anonymous: the post is on the home page with its badge; its page shows the preview and the sign-in prompt.
      const anon = await (await context(viewport)).newPage();
      await anon.goto(`${fx.t.baseUrl}/`);
      const item = anon.locator(`li[data-post="${id}"]`);
      expect(await item.locator('h2').textContent()).toBe('Harbour plan: the next phase');
      expect(await item.locator('.badge').textContent()).toBe('for Gold');
      expect(await item.locator('.excerpt').textContent()).toBe('What the council agreed on Tuesday, and what comes next.');
      expect(await item.locator('img.feature').evaluate((img: any) => img.naturalWidth)).toBe(1200);
      expect(await overflow(anon)).toBeLessThanOrEqual(0);
      await shot(anon, `site-home-anonymous-${label}.png`);
      await Promise.all([anon.waitForURL(`${fx.t.baseUrl}/p/harbour-plan-the-next-phase`), item.locator('h2 a').click()]);
      expect(await anon.locator('#post-preview').textContent()).toContain('The council met on Tuesday and agreed the harbour plan in fu');
      expect(await anon.locator('#gate-prompt').textContent()).toContain('Sign in or sign up to read on.');
      expect(await anon.content()).not.toContain(SECRET);
      expect(await overflow(anon)).toBeLessThanOrEqual(0);
      await shot(anon, `site-post-anonymous-${label}.png`);

      // A member without a tier: the upgrade prompt.
      const low = await signedIn(reader.email, reader.password, viewport);
      expect(await low.locator(`li[data-post="${id}"] .badge`).textContent()).toBe('for Gold');
      await low.goto(`${fx.t.baseUrl}/p/harbour-plan-the-next-phase`);
      expect(await low.locator('#gate-prompt').textContent()).toContain('Reading on needs the Gold tier or higher.');
      expect(await low.content()).not.toContain(SECRET);
      expect(await overflow(low)).toBeLessThanOrEqual(0);
      await shot(low, `site-post-tierless-${label}.png`);

      // A Gold member: the whole post, rendered.
      const gold = await signedIn(member.email, member.password, viewport);
      expect(await overflow(gold)).toBeLessThanOrEqual(0);
      await shot(gold, `site-home-gold-${label}.png`);
      await gold.goto(`${fx.t.baseUrl}/p/harbour-plan-the-next-phase`);
      expect(await gold.locator('#post-body').textContent()).toContain(SECRET);
      expect(await gold.locator('#post-body h2').textContent()).toBe('What changes');
      expect(await gold.locator('#post-body li').count()).toBe(2);
      expect(await gold.locator('#post-body a[href="https://example.org/minutes"]').getAttribute('rel')).toBe('noopener nofollow');
      expect(await overflow(gold)).toBeLessThanOrEqual(0);
      await shot(gold, `site-post-gold-${label}.png`);
      for (const p of [anon, low, gold]) await p.context().close();
    }

    // The editor and the list at phone width.
    const phone = await signedIn(owner.email, owner.password, PHONE);
    for (const [url, name] of [[`/admin/posts/${id}`, 'admin-post-edit-390.png'], ['/admin/posts', 'admin-posts-list-390.png']] as const) {
      await phone.goto(`${fx.t.baseUrl}${url}`);
      expect(await overflow(phone), url).toBeLessThanOrEqual(0);
      await shot(phone, name);
    }
  });
});
