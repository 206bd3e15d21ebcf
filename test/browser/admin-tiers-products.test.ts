import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { Product } from '../../src/models/product.js';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { createTier, tierMemberships } from '../helpers/tiers.js';

const PHONE = { width: 390, height: 844 };
const PROVIDER_COLUMNS = ['pro_card_price_id', 'pro_wallet_plan_id', 'pro_ios_product_id', 'pro_android_product_id'];

describeBrowser('browser: tiers, tier members and products screens', () => {
  const fx = useBrowserServer();

  async function signInPage(email: string, password: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  async function staffPage(viewport?: { width: number; height: number }): Promise<Page> {
    const staff = await fx.t.createUser({ permission: 5 });
    return signInPage(staff.email, staff.password, viewport);
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
  const submit = (page: Page, label: string) => Promise.all([page.waitForLoadState('load'), page.click(`button:has-text("${label}")`)]);

  // The longest browser path here (two refusals, a save, an edit); it outlasted 30 s on a loaded machine.
  it('staff create a tier with typed features; a value outside min/max is refused next to its field', { timeout: 90_000 }, async () => {
    const page = await staffPage();
    await page.goto(`${fx.t.baseUrl}/admin/tiers`);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/tiers/new`), page.click('#new-tier')]);
    await page.fill('#sbt_name', 'gold');
    await page.fill('#sbt_display_name', 'Gold');
    await page.fill('#sbt_tier_level', '30');
    await page.fill('#sbt_description', 'Everything, with priority support.');
    await page.fill('#feature_drive_storage_bytes', '5');
    await page.selectOption('#feature_drive_storage_bytes_unit', 'MB');
    await page.check('#feature_drive_share_links');
    await page.fill('#feature_drive_versioning_depth', '5000');
    await submit(page, 'Create tier');
    expect(await page.locator('#feature_drive_versioning_depth-error').textContent()).toBe('Must be at most 1000.');
    // The refused form keeps what was typed, including the ticked box.
    expect([await page.inputValue('#feature_drive_storage_bytes'), await page.inputValue('#feature_drive_storage_bytes_unit')]).toEqual(['5', 'MB']);
    expect(await page.isChecked('#feature_drive_share_links')).toBe(true);
    await shot(page, 'admin-tier-new-refused.png');
    await page.fill('#feature_drive_versioning_depth', '10');
    await submit(page, 'Create tier');
    expect(await page.locator('#tier-saved').textContent()).toBe('Tier created.');
    // Number inputs left empty have no explicit value, so the coverage audit warns about them (a checkbox
    // always posts its state, so boolean features are explicit once saved).
    expect(await page.locator('#coverage-warning li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-feature')))).toEqual(['drive_max_file_bytes']);
    // The mailbox plugin is not active: its features are folded away and left out of the audit.
    expect(await page.locator('details.features[data-source="mailbox"]').evaluate((el: any) => el.open)).toBe(false);
    await shot(page, 'admin-tier-edit.png');
    const row = await fx.t.services.db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_name', '=', 'gold').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ sbt_display_name: 'Gold', sbt_tier_level: 30, sbt_is_active: true });
    expect(row.sbt_features).toEqual({ drive_storage_bytes: 5000000, drive_share_links: true, drive_versioning_depth: 10, mailbox_fleet_slot: false });

    // Unticking a box saves false.
    await page.uncheck('#feature_drive_share_links');
    await page.uncheck('#sbt_is_active');
    await submit(page, 'Save tier');
    expect(await page.locator('#tier-saved').textContent()).toContain('Tier saved');
    const after = await fx.t.services.db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_name', '=', 'gold').executeTakeFirstOrThrow();
    expect(after.sbt_is_active).toBe(false);
    expect(after.sbt_features.drive_share_links).toBe(false);

    await page.goto(`${fx.t.baseUrl}/admin/tiers`);
    expect(await page.locator('tr[data-tier="gold"] .active').textContent()).toBe('no');
    await shot(page, 'admin-tiers-list.png');
  });

  it('staff add a member found by email and remove them; both are manual assignments', async () => {
    const tier = await createTier(fx.t, { name: 'silver', displayName: 'Silver', level: 20 });
    const member = await fx.t.createUser({ email: `pat-${Date.now()}@example.com` });
    const page = await staffPage();
    await page.goto(`${fx.t.baseUrl}/admin/tiers/${tier.tierId}/members`);
    expect(await page.locator('#no-members').textContent()).toContain('No one');
    await page.fill('#q', 'pat-');
    await submit(page, 'Search');
    await Promise.all([page.waitForLoadState('load'), page.click(`#search-results tr[data-email="${member.email}"] button[data-action=add]`)]);
    expect(await page.locator('#members-notice').textContent()).toBe('Member added.');
    const row = page.locator(`#members tr[data-email="${member.email}"]`);
    expect(await row.locator('.method').textContent()).toBe('Manual');
    expect(await row.locator('.status').textContent()).toBe('active');
    await shot(page, 'admin-tier-members.png');
    expect((await tierMemberships(fx.t, member.userId)).map((m) => [m.grm_sbt_subscription_tier_id, m.grm_assignment_method])).toEqual([[tier.tierId, 'manual']]);
    // Removing asks first (confirm.js); agreeing sends the form and the page loads again.
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForEvent('load'), row.locator('button[data-action=remove]').click()]);
    expect(await page.locator('#members-notice').textContent()).toBe('Member removed.');
    expect(await page.locator('#no-members').count()).toBe(1);
    expect(await tierMemberships(fx.t, member.userId)).toEqual([]);
    const reasons = await fx.t.services.db.selectFrom('cht_change_tracking').select('cht_change_reason').where('cht_usr_user_id', '=', member.userId).execute();
    expect(reasons.map((r) => r.cht_change_reason)).toEqual(['manual', 'manual']);
  });

  it('staff link a product to a tier on the product edit screen (phone-sized, no sideways scrolling)', async () => {
    const tier = await createTier(fx.t, { name: 'platinum', displayName: 'Platinum', level: 40 });
    const now = fx.t.clock.now();
    const product = await (fx.t.services.db as any)
      .insertInto('pro_products')
      .values({ pro_name: 'Platinum yearly', pro_link: 'platinum-yearly', pro_is_active: true, pro_create_time: now, pro_update_time: now })
      .returning('pro_product_id')
      .executeTakeFirstOrThrow();
    const productId = Number(product.pro_product_id);
    const page = await staffPage(PHONE);
    await page.goto(`${fx.t.baseUrl}/admin/products`);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/products/${productId}`), page.click(`tr[data-product="${productId}"] a`)]);
    await page.selectOption('#pro_sbt_subscription_tier_id', String(tier.tierId));
    // The provider references, where the Product model declares them.
    const references = PROVIDER_COLUMNS.filter((c) => Product.columns[c] !== undefined);
    expect(await page.locator(PROVIDER_COLUMNS.map((c) => `#${c}`).join(',')).count()).toBe(references.length);
    for (const c of references) await page.fill(`#${c}`, `ref-${c}`);
    await submit(page, 'Save product');
    expect(await page.locator('#product-saved').textContent()).toContain('Product saved');
    expect(await page.inputValue('#pro_sbt_subscription_tier_id')).toBe(String(tier.tierId));
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(PHONE.width);
    await shot(page, 'admin-product-edit-phone.png');
    const stored = await (fx.t.services.db as any)
      .selectFrom('pro_products')
      .select(['pro_sbt_subscription_tier_id', 'pro_is_active', ...references])
      .where('pro_product_id', '=', productId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ pro_sbt_subscription_tier_id: tier.tierId, pro_is_active: true, ...Object.fromEntries(references.map((c) => [c, `ref-${c}`])) });
    await page.goto(`${fx.t.baseUrl}/admin/products`);
    expect(await page.locator(`tr[data-product="${productId}"] .tier`).textContent()).toBe('Platinum');
    await shot(page, 'admin-products-phone.png');

    await page.goto(`${fx.t.baseUrl}/admin/tiers/new`);
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(PHONE.width);
    await shot(page, 'admin-tier-new-phone.png');
  });
});
