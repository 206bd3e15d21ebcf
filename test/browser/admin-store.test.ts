import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { STAND_IN_SOURCE_SETTINGS } from '../helpers/store.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier, tierMemberships } from '../helpers/tiers.js';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const VIEWPORTS = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

describeBrowser('browser: an admin that can sell (dashboard, products with prices, store switches, pricing into the cart, layout)', () => {
  // A configured billing source: the switches alone do not open the store.
  const fx = useBrowserServer({ settings: STAND_IN_SOURCE_SETTINGS });
  const seeded = {} as {
    staff: { email: string; password: string };
    gold: number;
    silver: number;
    goldProduct: number;
    silverProduct: number;
    member: { userId: number; email: string };
    users: number;
  };

  // Rows the dashboard test counts: made once, before any test signs anyone else up.
  beforeAll(async () => {
    const t = fx.t;
    const staff = await t.createUser({ permission: 5, firstName: 'Morgan', lastName: 'Staffer' });
    seeded.staff = staff;
    const silver = await createTier(t, { name: 'silver', displayName: 'Silver', level: 10, features: { drive_storage_bytes: 1_000_000_000, drive_share_links: false } });
    const gold = await createTier(t, { name: 'gold', displayName: 'Gold', level: 20, features: { drive_storage_bytes: 10_000_000_000, drive_share_links: true } });
    seeded.gold = gold.tierId;
    seeded.silver = silver.tierId;
    seeded.silverProduct = await subscriptionProduct(t, { name: 'Silver monthly', tierId: silver.tierId, period: 'month', extra: { pro_price: 900, pro_currency: 'usd', pro_short_description: 'For one person.' } });
    seeded.goldProduct = await subscriptionProduct(t, { name: 'Gold yearly', tierId: gold.tierId, period: 'year', extra: { pro_price: 24000, pro_currency: 'usd', pro_short_description: 'Everything, for a year.' } });
    const now = t.clock.now();
    const period = { periodStart: new Date(now.getTime() - 5 * 86_400_000), periodEnd: new Date(now.getTime() + 25 * 86_400_000) };
    const members = [];
    for (let i = 0; i < 3; i++) members.push(await t.createUser({ email: `member-${i}@example.com`, firstName: `Member ${i}` }));
    await t.services.tiers.membership.assignManually(members[0]!.userId, silver.tierId, null);
    await t.services.tiers.membership.assignManually(members[1]!.userId, silver.tierId, null);
    await t.services.tiers.membership.assignManually(members[2]!.userId, gold.tierId, null);
    seeded.member = members[0]!;
    // $9/month (card) + $240/year = $20/month (App Store): MRR $29.00; one wallet subscription cancelled yesterday.
    await insertSubscription(t, members[0]!.userId, seeded.silverProduct, { source: 'card_processor', price: 900, ...period });
    await insertSubscription(t, members[2]!.userId, seeded.goldProduct, { source: 'ios_store', price: 24000, ...period });
    await insertSubscription(t, members[1]!.userId, seeded.silverProduct, {
      source: 'wallet_provider',
      price: 900,
      status: 'cancelled',
      ...period,
      extra: { odi_subscription_cancelled_time: new Date(now.getTime() - 86_400_000) },
    });
    // A key with a long name and owner, for the keys table's widest row.
    await t.createMachineKey({ userId: members[2]!.userId, permission: 3 });
    seeded.users = 4;
  });

  async function signedIn(viewport: { width: number; height: number } = DESKTOP, who = seeded.staff): Promise<Page> {
    const page = await (await fx.browser.newContext({ viewport })).newPage();
    await page.goto(`${fx.t.baseUrl}/login?next=%2F`);
    await page.fill('#email', who.email);
    await page.fill('#password', who.password);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/`), page.click('main button[type=submit]')]);
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
  const documentWidth = (page: Page) => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  const submit = (page: Page, selector: string) => Promise.all([page.waitForLoadState('load'), page.click(selector)]);

  it('the dashboard shows the figures of the rows made here, with the chart drawn as SVG', async () => {
    const page = await signedIn();
    await page.goto(`${fx.t.baseUrl}/admin`);
    expect(await page.locator('#mrr').textContent()).toBe('$29.00');
    expect(await page.locator('#active-subscriptions').textContent()).toBe('2');
    expect(await page.locator('#user-count').textContent()).toBe(String(seeded.users));
    expect(await page.locator('#tier-members tr[data-tier="silver"] .count').textContent()).toBe('2');
    expect(await page.locator('#tier-members tr[data-tier="gold"] .count').textContent()).toBe('1');
    expect(await page.locator('#tier-members tr[data-tier=""] .count').textContent()).toBe('1');
    expect(await page.locator('#subscriptions-by-source tr[data-source="card_processor"] .active').textContent()).toBe('1');
    expect(await page.locator('#subscriptions-by-source tr[data-source="ios_store"] .active').textContent()).toBe('1');
    expect(await page.locator('#subscriptions-by-source tr[data-source="wallet_provider"] .ending').textContent()).toBe('1');
    expect(await page.locator('#recent-signups tr').count()).toBe(seeded.users);
    expect(await page.locator('#recent-cancellations tr').count()).toBe(1);
    expect(await page.locator('#recent-cancellations .email').textContent()).toContain('member-1@example.com');
    const today = fx.t.clock.now().toISOString().slice(0, 10);
    expect(await page.locator(`#activity-chart rect[data-label="${today}"][data-series="signups"]`).getAttribute('data-value')).toBe(String(seeded.users));
    // The bars are drawn: today's sign-up bar has a height, the chart fits the card.
    const bar = await page.locator(`#activity-chart rect[data-label="${today}"][data-series="signups"]`).boundingBox();
    expect(bar!.height).toBeGreaterThan(20);
    expect(await documentWidth(page)).toBe(DESKTOP.width);
    // The header shows the user's name once.
    expect((await page.locator('header').textContent())!.split('Morgan Staffer').length - 1).toBe(1);
    await shot(page, 'admin-dashboard.png');
  });

  it('every admin page fits at 1280x800 and 390x844 without sideways scrolling', { timeout: 120_000 }, async () => {
    const pages = [
      ['dashboard', '/admin'],
      ['tiers', '/admin/tiers'],
      ['tier-new', '/admin/tiers/new'],
      ['tier-edit', `/admin/tiers/${seeded.gold}`],
      ['tier-members', `/admin/tiers/${seeded.silver}/members?q=member`],
      ['products', '/admin/products'],
      ['product-new', '/admin/products/new'],
      ['product-edit', `/admin/products/${seeded.goldProduct}`],
      ['settings', '/admin/settings/subscriptions'],
      ['settings-general', '/admin/settings'],
      ['api-keys', '/admin/api-keys'],
      ['pricing', '/pricing'],
      ['cart-empty', '/cart'],
    ] as const;
    for (const [label, viewport] of VIEWPORTS) {
      const page = await signedIn(viewport);
      for (const [name, url] of pages) {
        await page.goto(`${fx.t.baseUrl}${url}`);
        await shot(page, `admin-layout-${name}-${label}.png`);
        expect(await documentWidth(page), `${name} at ${label}`).toBe(viewport.width);
        // Nothing hides inside a card either (a table scrolled sideways hides its actions).
        const clipped = await page.evaluate(() =>
          [...(globalThis as any).document.querySelectorAll('.card')].filter((c: any) => c.scrollWidth > c.clientWidth + 1).map((c: any) => c.querySelector('table')?.id ?? c.className),
        );
        expect(clipped, `${name} at ${label}`).toEqual([]);
      }
      await page.context().close();
    }
  });

  it('the API-keys table shows every action at 1280 px, and the one-time secret wraps on a phone', async () => {
    const page = await signedIn();
    await page.goto(`${fx.t.baseUrl}/admin/api-keys`);
    const table = await page.locator('#keys').boundingBox();
    const card = await page.locator('#keys').evaluate((el: any) => ({ scroll: el.parentElement.scrollWidth, client: el.parentElement.clientWidth }));
    expect(card.scroll).toBeLessThanOrEqual(card.client);
    for (const button of await page.locator('#keys button').all()) {
      const box = (await button.boundingBox())!;
      expect(await button.isVisible()).toBe(true);
      expect(box.x + box.width).toBeLessThanOrEqual(table!.x + table!.width + 1);
      expect(box.x + box.width).toBeLessThanOrEqual(DESKTOP.width);
    }
    const phone = await signedIn(PHONE);
    await phone.goto(`${fx.t.baseUrl}/admin/api-keys`);
    await phone.fill('#owner_email', seeded.member.email);
    await phone.fill('#name', 'Phone-made key');
    await submit(phone, 'button:has-text("Create key")');
    const secret = phone.locator('#new-secret-key');
    expect((await secret.textContent())!.length).toBeGreaterThan(20);
    const fits = await secret.evaluate((el: any) => el.scrollWidth <= el.clientWidth && el.getBoundingClientRect().right <= (globalThis as any).innerWidth);
    expect(fits).toBe(true);
    expect(await documentWidth(phone)).toBe(PHONE.width);
    await shot(phone, 'admin-api-keys-secret-phone.png');
  });

  it('staff create a product with a price, then edit its price and currency; the list shows money', async () => {
    const page = await signedIn();
    await page.goto(`${fx.t.baseUrl}/admin/products`);
    await Promise.all([page.waitForURL(`${fx.t.baseUrl}/admin/products/new`), page.click('#new-product')]);
    await page.fill('#pro_name', 'Gold monthly');
    await page.fill('#pro_price', '19.5');
    await page.fill('#pro_currency', 'usd');
    await page.selectOption('#pro_subscription_period', 'month');
    await page.selectOption('#pro_sbt_subscription_tier_id', String(seeded.gold));
    await page.fill('#pro_card_price_id', 'price_gold_monthly');
    await submit(page, 'button:has-text("Create product")');
    expect(await page.locator('#product-saved').textContent()).toBe('Product created.');
    const id = Number(/\/admin\/products\/(\d+)$/.exec(page.url())![1]);
    expect(await page.inputValue('#pro_price')).toBe('19.50');
    await shot(page, 'admin-product-created.png');
    // The notice is one-time: a reload does not bring it back.
    await page.reload();
    expect(await page.locator('#product-saved').count()).toBe(0);

    // A refused price keeps what was typed and says why next to the field.
    await page.fill('#pro_price', '19.999');
    await submit(page, 'button:has-text("Save product")');
    expect(await page.locator('#pro_price-error').textContent()).toBe('USD amounts have at most 2 decimal places.');
    await shot(page, 'admin-product-price-refused.png');
    await page.fill('#pro_price', '2500');
    await page.fill('#pro_currency', 'JPY');
    await submit(page, 'button:has-text("Save product")');
    expect(await page.locator('#product-saved').textContent()).toBe('Product saved.');
    const row = await (fx.t.services.db as any).selectFrom('pro_products').selectAll().where('pro_product_id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ pro_name: 'Gold monthly', pro_link: 'gold-monthly', pro_price: 2500, pro_currency: 'jpy', pro_subscription_period: 'month', pro_sbt_subscription_tier_id: seeded.gold, pro_card_price_id: 'price_gold_monthly', pro_is_active: true });
    await page.goto(`${fx.t.baseUrl}/admin/products`);
    expect(await page.locator(`tr[data-product="${id}"] .price`).textContent()).toBe('¥2,500 per month');
    await shot(page, 'admin-products.png');
  });

  it('staff open the store with its two switches; the notice shows once', async () => {
    const page = await signedIn();
    await page.goto(`${fx.t.baseUrl}/admin/settings/subscriptions`);
    expect(await page.locator('#store-state').textContent()).toContain('The store is closed');
    await page.check('#products_active');
    await page.check('#subscriptions_active');
    await submit(page, 'button:has-text("Save settings")');
    expect(await page.locator('#settings-saved').textContent()).toBe('Settings saved.');
    expect(await page.locator('#store-state').textContent()).toBe('The store is open: products and subscriptions are on sale.');
    expect(fx.t.services.store.active()).toBe(true);
    await shot(page, 'admin-store-switches.png');
    await page.reload();
    expect(await page.locator('#settings-saved').count()).toBe(0);
    expect(await page.isChecked('#products_active')).toBe(true);
  });

  it('a guest compares plans on /pricing (reached from the empty cart) and chooses one into the cart', async () => {
    await fx.t.services.settings.set('products_active', true);
    await fx.t.services.settings.set('subscriptions_active', true);
    for (const [label, viewport] of VIEWPORTS) {
      const page = await (await fx.browser.newContext({ viewport })).newPage();
      await page.goto(`${fx.t.baseUrl}/cart`);
      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/pricing`), page.click('#cart-pricing')]);
      const silver = page.locator(`.plan[data-product="${seeded.silverProduct}"]`);
      const gold = page.locator(`.plan[data-product="${seeded.goldProduct}"]`);
      expect(await silver.locator('.price').textContent()).toBe('$9.00 / month');
      expect(await gold.locator('.price').textContent()).toBe('$240.00 / year');
      expect(await gold.locator('li[data-feature="drive_storage_bytes"]').textContent()).toBe('Drive storage: 10 GB');
      expect(await silver.locator('li[data-feature="drive_share_links"]').getAttribute('class')).toBe('no');
      expect(await documentWidth(page)).toBe(viewport.width);
      await shot(page, `pricing-${label}.png`);
      await Promise.all([page.waitForURL(`${fx.t.baseUrl}/cart`), gold.locator('button.choose').click()]);
      expect(await page.locator(`#cart-items tr[data-product="${seeded.goldProduct}"]`).textContent()).toBe('Gold yearly$240.001$240.00');
      expect(await page.locator('.cart-total').textContent()).toBe('$240.00');
      await shot(page, `pricing-chosen-cart-${label}.png`);
      await page.context().close();
    }
  });

  it('removing a tier member asks first: cancelling keeps them, agreeing removes them once', async () => {
    const page = await signedIn(PHONE);
    await page.goto(`${fx.t.baseUrl}/admin/tiers/${seeded.silver}/members`);
    const row = page.locator(`#members tr[data-email="${seeded.member.email}"]`);
    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.dismiss();
    });
    await row.locator('button[data-action=remove]').click();
    expect(questions).toEqual([`Remove ${seeded.member.email} from Silver? They lose the tier’s features now.`]);
    expect((await tierMemberships(fx.t, seeded.member.userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([seeded.silver]);
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForEvent('load'), row.locator('button[data-action=remove]').click()]);
    expect(await page.locator('#members-notice').textContent()).toBe('Member removed.');
    expect(await tierMemberships(fx.t, seeded.member.userId)).toEqual([]);
    await shot(page, 'admin-tier-member-removed-phone.png');
  });

  it('while the API refuses plain HTTP, staff pages show the banner with the one command, at both sizes', async () => {
    await fx.t.services.settings.set('api_require_https', true);
    try {
      for (const [label, viewport] of VIEWPORTS) {
        const page = await signedIn(viewport);
        await page.goto(`${fx.t.baseUrl}/admin/tiers`);
        expect(await page.locator('#https-banner pre.command').textContent()).toBe('npx gatehouse setting set api_require_https false');
        await shot(page, `admin-https-banner-${label}.png`);
        expect(await documentWidth(page)).toBe(viewport.width);
        await page.context().close();
      }
    } finally {
      await fx.t.services.settings.set('api_require_https', false);
    }
  });

  it('tier names are identifiers and levels non-negative, refused next to their fields; an inactive plugin’s features are folded away', async () => {
    const page = await signedIn();
    await page.goto(`${fx.t.baseUrl}/admin/tiers/new`);
    await page.fill('#sbt_name', 'Gold Plus');
    await page.fill('#sbt_display_name', 'Gold Plus');
    await page.fill('#sbt_tier_level', '-5');
    await page.fill('#feature_drive_storage_bytes', '2');
    await page.selectOption('#feature_drive_storage_bytes_unit', 'GB');
    await submit(page, 'button:has-text("Create tier")');
    expect(await page.locator('#sbt_name-error').textContent()).toBe('Use only lower-case letters, digits and underscores, for example premium_plus.');
    expect(await page.locator('#sbt_tier_level-error').textContent()).toBe('The level cannot be negative: use 0 or more (higher is a better tier).');
    expect([await page.inputValue('#feature_drive_storage_bytes'), await page.inputValue('#feature_drive_storage_bytes_unit')]).toEqual(['2', 'GB']);
    const inactive = page.locator('details.features[data-inactive]');
    for (const d of await inactive.all()) expect(await d.evaluate((el: any) => el.open)).toBe(false);
    await shot(page, 'admin-tier-refused.png');
    await page.fill('#sbt_name', 'gold_plus');
    await page.fill('#sbt_tier_level', '30');
    await submit(page, 'button:has-text("Create tier")');
    expect(await page.locator('#tier-saved').textContent()).toBe('Tier created.');
    expect([await page.inputValue('#feature_drive_storage_bytes'), await page.inputValue('#feature_drive_storage_bytes_unit')]).toEqual(['2', 'GB']);
    const stored = await fx.t.services.db.selectFrom('sbt_subscription_tiers').select('sbt_features').where('sbt_name', '=', 'gold_plus').executeTakeFirstOrThrow();
    expect(stored.sbt_features.drive_storage_bytes).toBe(2_000_000_000);
  });
});
