import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier } from '../helpers/tiers.js';

describeBrowser('browser: a gated post and the RSS feed', () => {
  const fx = useBrowserServer({ settings: { tier_gate_preview_length: 40 } });

  async function signedIn(email: string, password: string): Promise<Page> {
    const page = await (await fx.browser.newContext()).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  it('a tierless reader sees the preview and the prompt; a member of the tier sees the body; RSS parses as XML', async () => {
    const gold = await createTier(fx.t, { name: 'gold', displayName: 'Gold', level: 20 });
    const staff = await fx.t.createUser({ permission: 5 });
    const reader = await fx.t.createUser();
    const member = await fx.t.createUser();
    await fx.t.services.tiers.membership.assignManually(member.userId, gold.tierId, null);
    const now = fx.t.clock.now();
    const row = await (fx.t.services.db as any)
      .insertInto('pst_posts')
      .values({
        pst_usr_user_id: staff.userId, pst_title: 'Gold report', pst_is_published: true, pst_published_time: now, pst_create_time: now, pst_update_time: now,
        pst_body: '<p>The quarterly numbers are in, and they are better than expected.</p><p>Hidden detail: revenue rose by 41 percent.</p>',
        pst_tier_min_level: 20,
      })
      .returning('pst_post_id')
      .executeTakeFirstOrThrow();
    const url = `${fx.t.baseUrl}/post/${row.pst_post_id}`;

    const tierless = await signedIn(reader.email, reader.password);
    await tierless.goto(url);
    expect(await tierless.locator('#post-preview').textContent()).toContain('The quarterly numbers are in, and they');
    expect(await tierless.locator('#gate-prompt').textContent()).toContain('Gold');
    expect(await tierless.content()).not.toContain('41 percent');
    await tierless.screenshot({ path: path.join(SCREENSHOT_DIR, 'gated-post-tierless.png'), fullPage: true });

    const gold1 = await signedIn(member.email, member.password);
    await gold1.goto(url);
    expect(await gold1.locator('#post-body').textContent()).toContain('revenue rose by 41 percent');

    const feed = await gold1.evaluate(async () => {
      const text = await (await fetch('/rss')).text();
      const doc = new (globalThis as any).DOMParser().parseFromString(text, 'application/xml');
      return { errors: doc.getElementsByTagName('parsererror').length, items: doc.getElementsByTagName('item').length, hasGated: text.includes('Gold report') };
    });
    expect(feed).toEqual({ errors: 0, items: 0, hasGated: false });
  });
});
