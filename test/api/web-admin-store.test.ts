import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { ensureBillingSource } from '../helpers/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

async function token(t: TestApp, c: WebClient, form: string): Promise<string> {
  return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
}

/** The text of the error shown under a field, or null when there is none. */
const fieldError = (body: string, id: string) => {
  const m = new RegExp(`id="${id}-error"[^>]*>([^<]*)<`).exec(body);
  return m ? m[1]! : null;
};
/** The inner text of the element with this id (its first text run). */
const textOf = (body: string, id: string) => {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(body);
  return m ? m[1]! : null;
};
const productRow = (t: TestApp, id: number) => (t.services.db as any).selectFrom('pro_products').selectAll().where('pro_product_id', '=', id).executeTakeFirstOrThrow();
const productCount = async (t: TestApp) => Number((await (t.services.db as any).selectFrom('pro_products').select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('admin store screens: products with prices, store switches, tier rules, pricing, dashboard', () => {
  let t: TestApp;
  let staff: WebClient;
  beforeAll(async () => {
    t = await createTestApp();
    // The store opens only with a configured billing source.
    await ensureBillingSource(t);
    const s = await t.createUser({ permission: 5 });
    staff = await signIn(t, s.email, s.password);
  });
  afterAll(async () => t.close());

  const productForm = async (fields: Record<string, string>) => ({
    form_token: await token(t, staff, 'product-edit'),
    pro_name: 'Gold monthly',
    pro_short_description: '',
    pro_is_active: 'true',
    pro_currency: 'USD',
    pro_subscription_period: 'month',
    pro_sbt_subscription_tier_id: '',
    ...fields,
  });

  describe('product create and edit', () => {
    it('creates a product with a typed price stored in minor units, and shows it back as money', async () => {
      const tier = await createTier(t, { name: 'gold', displayName: 'Gold', level: 30 });
      const form = await staff.get('/admin/products/new');
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('<input id="pro_price" name="pro_price" type="text" inputmode="decimal"');
      const res = await staff.postForm('/admin/products/new', await productForm({ pro_price: '1,250.5', pro_sbt_subscription_tier_id: String(tier.tierId), pro_card_price_id: 'price_123' }));
      expect(res.statusCode).toBe(303);
      const id = Number(/^\/admin\/products\/(\d+)$/.exec(String(res.headers.location))![1]);
      expect(await productRow(t, id)).toMatchObject({
        pro_name: 'Gold monthly',
        pro_link: 'gold-monthly',
        pro_price: 125050,
        pro_currency: 'usd',
        pro_subscription_period: 'month',
        pro_sbt_subscription_tier_id: tier.tierId,
        pro_card_price_id: 'price_123',
        pro_is_active: true,
      });
      const page = await staff.get(`/admin/products/${id}`);
      expect(page.body).toContain('<p class="notice" role="status" id="product-saved">Product created.</p>');
      expect(page.body).toMatch(/<input id="pro_price"[^>]*value="1250.50">/);
      expect(page.body).toMatch(/<input id="pro_currency"[^>]*value="USD">/);
      expect((await staff.get(`/admin/products/${id}`)).body, 'the notice is shown once').not.toContain('id="product-saved"');
      const list = await staff.get('/admin/products');
      expect(new RegExp(`<tr data-product="${id}">[\\s\\S]*?</tr>`).exec(list.body)![0]).toContain('<td class="price" data-label="Price">$1,250.50 per month</td>');
    });

    it('edits the price in the currency’s own minor unit (JPY has none, KWD three)', async () => {
      const res = await staff.postForm('/admin/products/new', await productForm({ pro_name: 'Yen plan', pro_price: '1200', pro_currency: 'jpy' }));
      expect(res.statusCode).toBe(303);
      const id = Number(/(\d+)$/.exec(String(res.headers.location))![1]);
      expect(await productRow(t, id)).toMatchObject({ pro_price: 1200, pro_currency: 'jpy' });
      const edit = await staff.postForm(`/admin/products/${id}`, await productForm({ pro_name: 'Dinar plan', pro_price: '3.125', pro_currency: 'KWD', pro_subscription_period: 'year' }));
      expect(edit.statusCode).toBe(303);
      expect(await productRow(t, id)).toMatchObject({ pro_name: 'Dinar plan', pro_price: 3125, pro_currency: 'kwd', pro_subscription_period: 'year' });
      expect((await staff.get(`/admin/products/${id}`)).body).toMatch(/<input id="pro_price"[^>]*value="3.125">/);
    });

    it('refuses a bad price or currency next to its field, saving nothing', async () => {
      const before = await productCount(t);
      const cases: Array<[Record<string, string>, string, string]> = [
        [{ pro_price: '12.505' }, 'pro_price', 'USD amounts have at most 2 decimal places.'],
        [{ pro_price: '-5' }, 'pro_price', 'The price cannot be negative.'],
        [{ pro_price: 'twelve' }, 'pro_price', 'Enter an amount such as 12.50.'],
        [{ pro_price: '12.5', pro_currency: 'JPY' }, 'pro_price', 'JPY amounts have no decimal places.'],
        [{ pro_price: '99999999999999999' }, 'pro_price', 'The amount is too large.'],
        [{ pro_price: '10', pro_currency: 'US' }, 'pro_currency', 'Enter a three-letter currency code such as USD or EUR.'],
        [{ pro_price: '10', pro_currency: 'XQQ' }, 'pro_currency', 'Enter a three-letter currency code such as USD or EUR.'],
        [{ pro_price: '10', pro_subscription_period: 'hour' }, 'pro_subscription_period', 'Expected one of day, week, month, year.'],
      ];
      for (const [fields, field, message] of cases) {
        const res = await staff.postForm('/admin/products/new', await productForm(fields));
        expect(res.statusCode, JSON.stringify(fields)).toBe(400);
        expect(fieldError(res.body, field), JSON.stringify(fields)).toEqual(message);
        expect(res.body).toContain('id="form-error"');
      }
      expect(await productCount(t)).toBe(before);
      // What was typed is kept in the refused form.
      const kept = await staff.postForm('/admin/products/new', await productForm({ pro_price: '12.505' }));
      expect(kept.body).toMatch(/<input id="pro_price"[^>]*value="12.505">/);
    });

    it('an empty price leaves the product without one (not sold until priced)', async () => {
      const res = await staff.postForm('/admin/products/new', await productForm({ pro_name: 'Unpriced', pro_price: '' }));
      expect(res.statusCode).toBe(303);
      const id = Number(/(\d+)$/.exec(String(res.headers.location))![1]);
      expect(await productRow(t, id)).toMatchObject({ pro_price: null });
      const list = await staff.get('/admin/products');
      expect(new RegExp(`<tr data-product="${id}">[\\s\\S]*?</tr>`).exec(list.body)![0]).toContain('no price');
    });
  });

  describe('tier rules', () => {
    const tierForm = async (fields: Record<string, string>) => ({ form_token: await token(t, staff, 'tier-edit'), sbt_display_name: 'X', sbt_tier_level: '1', sbt_is_active: 'true', ...fields });

    it('a tier name is an identifier: lower-case letters, digits and underscores', async () => {
      for (const name of ['Gold', 'gold plus', 'gold-plus', 'gölд', 'gold!']) {
        const res = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: name }));
        expect(res.statusCode, name).toBe(400);
        expect(fieldError(res.body, 'sbt_name'), name).toBe('Use only lower-case letters, digits and underscores, for example premium_plus.');
      }
      const ok = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'pro_2026' }));
      expect(ok.statusCode).toBe(303);
      const list = await staff.get('/admin/tiers');
      expect(list.body).toContain('<code class="ident">pro_2026</code>');
    });

    it('a tier level is a whole number of 0 or more', async () => {
      for (const [level, message] of [
        ['-1', 'The level cannot be negative: use 0 or more (higher is a better tier).'],
        ['1.5', 'Enter a whole number of 0 or more (higher is a better tier).'],
        ['', 'Enter a whole number of 0 or more (higher is a better tier).'],
        ['99999999999', 'Enter a whole number of 0 or more (higher is a better tier).'],
      ]) {
        const res = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'levels', sbt_tier_level: level! }));
        expect(res.statusCode, level).toBe(400);
        expect(fieldError(res.body, 'sbt_tier_level'), level).toBe(message);
      }
      const zero = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'levels', sbt_tier_level: '0' }));
      expect(zero.statusCode).toBe(303);
    });

    it('sizes are a number with a unit picker, stored as bytes in decimal units; a bad size is refused next to its field', async () => {
      const res = await staff.postForm(
        '/admin/tiers/new',
        await tierForm({ sbt_name: 'sized', feature_drive_storage_bytes: '2', feature_drive_storage_bytes_unit: 'GB', feature_drive_max_file_bytes: '1.5', feature_drive_max_file_bytes_unit: 'GB' }),
      );
      expect(res.statusCode).toBe(303);
      const row = await t.services.db.selectFrom('sbt_subscription_tiers').select('sbt_features').where('sbt_name', '=', 'sized').executeTakeFirstOrThrow();
      expect(row.sbt_features).toMatchObject({ drive_storage_bytes: 2_000_000_000, drive_max_file_bytes: 1_500_000_000 });
      const page = await staff.get(String(res.headers.location));
      const control = (key: string) => new RegExp(`<div class="size-input"><input id="feature_${key}"[^>]*value="([^"]*)"><select id="feature_${key}_unit" name="feature_${key}_unit" aria-label="Unit for [^"]+">(.*?)</select></div>`).exec(page.body);
      const picked = (m: RegExpExecArray | null) => [m?.[1], /<option value="(\w+)" selected>/.exec(m?.[2] ?? '')?.[1]];
      expect(picked(control('drive_storage_bytes'))).toEqual(['2', 'GB']);
      expect(picked(control('drive_max_file_bytes'))).toEqual(['1500', 'MB']);
      expect([...(control('drive_storage_bytes')?.[2] ?? '').matchAll(/<option value="(\w+)"/g)].map((m) => m[1])).toEqual(['B', 'kB', 'MB', 'GB', 'TB']);
      // A size typed with its own unit wins over the picker; binary units are not this site's units.
      const typed = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'typed', feature_drive_storage_bytes: '500 MB', feature_drive_storage_bytes_unit: 'GB' }));
      expect(typed.statusCode).toBe(303);
      const typedRow = await t.services.db.selectFrom('sbt_subscription_tiers').select('sbt_features').where('sbt_name', '=', 'typed').executeTakeFirstOrThrow();
      expect(typedRow.sbt_features).toMatchObject({ drive_storage_bytes: 500_000_000 });
      const binary = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'binary', feature_drive_storage_bytes: '1.5 GiB' }));
      expect(binary.statusCode).toBe(400);
      expect(fieldError(binary.body, 'feature_drive_storage_bytes')).toBe('Use kB, MB, GB or TB (1 GB = 1,000,000,000 bytes).');
      const bad = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'badsize', feature_drive_storage_bytes: '2 parsecs', feature_drive_storage_bytes_unit: 'GB' }));
      expect(bad.statusCode).toBe(400);
      expect(fieldError(bad.body, 'feature_drive_storage_bytes')).toBe('Enter a size such as 500 MB, 2 GB or 0.');
      // The refused form shows what was typed, with the unit still picked.
      expect(bad.body).toMatch(/<input id="feature_drive_storage_bytes"[^>]*value="2 parsecs">/);
      expect(bad.body).toMatch(/<select id="feature_drive_storage_bytes_unit"[^>]*>.*<option value="GB" selected>GB<\/option>/);
      const tooSmall = await staff.postForm('/admin/tiers/new', await tierForm({ sbt_name: 'negative', feature_drive_storage_bytes: '-1', feature_drive_storage_bytes_unit: 'MB' }));
      expect(tooSmall.statusCode).toBe(400);
      expect(fieldError(tooSmall.body, 'feature_drive_storage_bytes')).toBe('Must be at least 0.');
    });

    it('removing a member asks for confirmation first (the form carries the question)', async () => {
      const tier = await createTier(t, { name: 'confirmed', displayName: 'Confirmed', level: 3 });
      const u = await t.createUser();
      await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
      const page = await staff.get(`/admin/tiers/${tier.tierId}/members`);
      expect(page.body).toContain(`<form class="inline" method="post" action="/admin/tiers/${tier.tierId}/members/${u.userId}/remove" data-confirm="Remove ${u.email} from Confirmed? They lose the tier’s features now.">`);
      expect(page.body).toContain('<script src="/static/confirm.js" defer></script>');
      const script = await staff.get('/static/confirm.js');
      expect(script.statusCode).toBe(200);
      expect(script.body).toContain('window.confirm(question)');
      // After the remove, the notice is shown once.
      const removed = await staff.postForm(`/admin/tiers/${tier.tierId}/members/${u.userId}/remove`, { form_token: await token(t, staff, 'tier-members') });
      expect(removed.headers.location).toBe(`/admin/tiers/${tier.tierId}/members`);
      expect((await staff.get(`/admin/tiers/${tier.tierId}/members`)).body).toContain('id="members-notice">Member removed.</p>');
      expect((await staff.get(`/admin/tiers/${tier.tierId}/members`)).body).not.toContain('Member removed.');
    });
  });

  describe('store switches', () => {
    it('the settings page explains both switches and opens the store when both are on', async () => {
      const page = await staff.get('/admin/settings/subscriptions');
      expect(page.body).toContain('<h2 id="store-switches">Store</h2>');
      expect(page.body).toContain('Sell products (products_active)');
      expect(page.body).toContain('Sell subscriptions (subscriptions_active)');
      expect(textOf(page.body, 'store-state')).toContain('The store is closed: nothing is sold until both switches are on and a billing source is configured');
      const post = async (products: boolean, subscriptions: boolean) =>
        staff.postForm('/admin/settings/subscriptions', {
          form_token: await token(t, staff, 'subscription-settings'),
          products_active: String(products),
          subscriptions_active: String(subscriptions),
        });
      expect((await post(true, false)).statusCode).toBe(303);
      expect(t.services.settings.bool('products_active')).toBe(true);
      expect(t.services.store.active()).toBe(false);
      expect(textOf((await staff.get('/admin/settings/subscriptions')).body, 'store-state')).toContain('closed');
      expect((await post(true, true)).statusCode).toBe(303);
      expect(t.services.store.active()).toBe(true);
      const open = await staff.get('/admin/settings/subscriptions');
      expect(textOf(open.body, 'store-state')).toBe('The store is open: products and subscriptions are on sale.');
      expect(open.body).toMatch(/<input id="products_active" name="products_active" type="checkbox" value="true" checked>/);
      await post(false, false);
      expect(t.services.store.active()).toBe(false);
    });
  });

  describe('pricing', () => {
    it('lists active tier products with their price per period and only the features that differ; Choose appears while the store is open', async () => {
      // Only this test's plans are on sale (the product tests above left some).
      await (t.services.db as any).updateTable('pro_products').set({ pro_is_active: false }).execute();
      const basic = await createTier(t, { name: 'p_basic', displayName: 'Basic', level: 110, features: { drive_storage_bytes: 1_000_000_000, drive_share_links: false, drive_versioning_depth: 5 } });
      const plus = await createTier(t, { name: 'p_plus', displayName: 'Plus', level: 120, features: { drive_storage_bytes: 5_000_000_000, drive_share_links: true, drive_versioning_depth: 5 } });
      const hidden = await createTier(t, { name: 'p_hidden', displayName: 'Hidden', level: 130, active: false });
      const monthly = await subscriptionProduct(t, { name: 'Basic monthly', tierId: basic.tierId, period: 'month', extra: { pro_price: 500, pro_currency: 'usd' } });
      const yearly = await subscriptionProduct(t, { name: 'Plus yearly', tierId: plus.tierId, period: 'year', extra: { pro_price: 9900, pro_currency: 'eur' } });
      const inactive = await subscriptionProduct(t, { name: 'Old plan', tierId: plus.tierId, active: false, extra: { pro_price: 100 } });
      const unpriced = await subscriptionProduct(t, { name: 'Unpriced plan', tierId: plus.tierId });
      const inactiveTier = await subscriptionProduct(t, { name: 'Hidden plan', tierId: hidden.tierId, extra: { pro_price: 100 } });
      const tierless = await subscriptionProduct(t, { name: 'Sticker', tierId: null, extra: { pro_price: 100 } });

      const guest = webClient(t);
      const closed = await guest.get('/pricing');
      expect(closed.statusCode).toBe(200);
      const shown = [...closed.body.matchAll(/<div class="card plan" data-product="(\d+)"/g)].map((m) => Number(m[1]));
      expect(shown).toContain(monthly);
      expect(shown).toContain(yearly);
      for (const id of [inactive, unpriced, inactiveTier, tierless]) expect(shown, String(id)).not.toContain(id);
      expect(shown.indexOf(monthly)).toBeLessThan(shown.indexOf(yearly));
      const card = (body: string, id: number) => body.split('<div class="card plan" ').find((c) => c.startsWith(`data-product="${id}"`))!;
      expect(card(closed.body, monthly)).toContain('<div class="price">$5.00<span class="per"> / month</span></div>');
      expect(card(closed.body, yearly)).toContain('<div class="price">€99.00<span class="per"> / year</span></div>');
      // Storage and share links differ between the tiers; the versioning depth (5 on both) does not.
      expect(card(closed.body, yearly)).toContain('<li data-feature="drive_storage_bytes">');
      expect(card(closed.body, yearly)).toContain('<strong>5 GB</strong>');
      expect(card(closed.body, yearly)).toContain('<li data-feature="drive_share_links" class="yes">');
      expect(card(closed.body, monthly)).toContain('<li data-feature="drive_share_links" class="no">');
      expect(closed.body).not.toContain('data-feature="drive_versioning_depth"');
      expect(closed.body).not.toContain('button class="primary choose"');
      expect(closed.body).toContain('id="store-closed"');

      await t.services.settings.set('products_active', true);
      await t.services.settings.set('subscriptions_active', true);
      try {
        const open = await guest.get('/pricing');
        expect(open.body).toContain(`<button class="primary choose" type="button" data-product="${monthly}">Choose</button>`);
        expect(open.body).toContain('<script src="/static/pricing.js" defer></script>');
        // Choose posts the cart action; the cart then lists the plan.
        const added = await guest.api('POST', '/api/v1/action/cart', { payload: { product_id: yearly } });
        expect(added.statusCode).toBe(200);
        expect((await guest.get('/cart')).body).toMatch(new RegExp(`<tr data-product="${yearly}"><td class="name">Plus yearly</td><td class="num unit-price" data-label="Price">[^<]+</td><td class="num quantity" data-label="Quantity">1</td>`));
      } finally {
        await t.services.settings.set('products_active', false);
        await t.services.settings.set('subscriptions_active', false);
      }
      const script = await guest.get('/static/pricing.js');
      expect(script.body).toContain("window.serviceApi.post('cart'");
    });

    it('an empty cart links to the pricing page, which is in the header', async () => {
      const res = await webClient(t).get('/cart');
      expect(res.body).toContain('<p id="cart-empty">Your cart is empty. <a href="/pricing" id="cart-pricing">See the plans and prices</a>.</p>');
      expect(res.body).toContain('<a href="/pricing" id="nav-pricing">Pricing</a>');
    });
  });

  describe('staff banner while the API refuses plain HTTP', () => {
    it('staff pages say so with the one command that changes it; member and public pages do not', async () => {
      const member = await t.createUser();
      const memberClient = await signIn(t, member.email, member.password);
      expect((await staff.get('/admin/tiers')).body).not.toContain('id="https-banner"');
      await t.services.settings.set('api_require_https', true);
      try {
        for (const url of ['/admin', '/admin/tiers', '/admin/products/new', '/admin/settings/subscriptions', '/admin/api-keys']) {
          const page = await staff.get(url);
          expect(page.body, url).toContain('id="https-banner"');
          expect(page.body, url).toContain('<pre class="command">npx gatehouse setting set api_require_https false</pre>');
        }
        expect((await memberClient.get('/profile/subscription')).body).not.toContain('id="https-banner"');
        expect((await webClient(t).get('/pricing')).body).not.toContain('id="https-banner"');
      } finally {
        await t.services.settings.set('api_require_https', false);
      }
      expect((await staff.get('/admin/tiers')).body).not.toContain('id="https-banner"');
    });
  });

  describe('dashboard', () => {
    it('shows members per tier, subscriptions by source, MRR, recent sign-ups and cancellations, and the 30-day chart', async () => {
      // Days relative to the app's clock (moving it far would expire the staff's web session).
      const now = t.clock.now();
      const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
      const at = (offset: number) => new Date(now.getTime() + offset * 86_400_000);
      const gold = await createTier(t, { name: 'dash_gold', displayName: 'Dash Gold', level: 200 });
      const silver = await createTier(t, { name: 'dash_silver', displayName: 'Dash Silver', level: 190 });
      const monthly = await subscriptionProduct(t, { name: 'Dash monthly', tierId: silver.tierId, period: 'month' });
      const yearly = await subscriptionProduct(t, { name: 'Dash yearly', tierId: gold.tierId, period: 'year' });
      const weekly = await subscriptionProduct(t, { name: 'Dash weekly', tierId: silver.tierId, period: 'week' });
      const users = [];
      for (let i = 0; i < 5; i++) users.push(await t.createUser({ email: `dash-${i}-${Date.now()}@example.com` }));
      for (const u of users.slice(0, 3)) await t.services.tiers.membership.assignManually(u.userId, silver.tierId, null);
      await t.services.tiers.membership.assignManually(users[3]!.userId, gold.tierId, null);
      const period = { periodStart: at(-10), periodEnd: at(20) };
      // Renewing: $10/month (card), $120/year (= $10/month, App Store), €12/week (= €52/month, Google Play).
      await insertSubscription(t, users[0]!.userId, monthly, { source: 'card_processor', price: 1000, ...period });
      await insertSubscription(t, users[3]!.userId, yearly, { source: 'ios_store', price: 12000, ...period });
      await insertSubscription(t, users[1]!.userId, weekly, { source: 'android_store', price: 1200, currency: 'eur', ...period });
      // Cancelled at period end (still running, not recurring) two days ago; expired (ended) today.
      await insertSubscription(t, users[2]!.userId, monthly, { source: 'wallet_provider', price: 1000, status: 'cancelled', ...period, extra: { odi_subscription_cancelled_time: at(-2) } });
      const ended = await insertSubscription(t, users[4]!.userId, monthly, { source: 'card_processor', price: 1000, status: 'expired', ...period, extra: { odi_subscription_cancelled_time: now } });

      const page = await staff.get('/admin');
      expect(page.statusCode).toBe(200);
      const body = page.body;
      expect(body).toContain('<span data-currency="eur">€52.00</span>');
      expect(body).toContain('<span data-currency="usd">$20.00</span>');
      expect(textOf(body, 'active-subscriptions')).toBe('3');
      const row = (attr: string, value: string) => new RegExp(`<tr ${attr}="${value}">[\\s\\S]*?</tr>`).exec(body)![0];
      // Each count links to the members it counts (admin-members.test.ts follows the links).
      const counts = (source: string) => row('data-source', source).replace(/<a href="[^"]*">(\d+)<\/a>/g, '$1');
      expect(counts('card_processor')).toContain('<td class="active">1</td><td class="ending">0</td>');
      expect(counts('ios_store')).toContain('<td class="active">1</td><td class="ending">0</td>');
      expect(counts('android_store')).toContain('<td class="active">1</td><td class="ending">0</td>');
      expect(counts('wallet_provider')).toContain('<td class="active">0</td><td class="ending">1</td>');
      expect(row('data-source', 'wallet_provider')).toContain('<td class="ending"><a href="/admin/members?source=wallet_provider&amp;status=ending">1</a></td>');
      expect(row('data-tier', 'dash_silver')).toContain(`<td class="count"><a href="/admin/members?tier=${silver.tierId}">3</a></td>`);
      expect(row('data-tier', 'dash_gold')).toContain(`<td class="count"><a href="/admin/members?tier=${gold.tierId}">1</a></td>`);
      // Recent sign-ups, newest first; recent cancellations, newest first.
      const signups = [...body.matchAll(/<tr data-user="(\d+)">/g)].map((m) => Number(m[1]));
      expect(signups.slice(0, 5)).toEqual(users.map((u) => u.userId).reverse());
      const cancellations = [...body.matchAll(/<tr data-item="(\d+)">/g)].map((m) => Number(m[1]));
      expect(cancellations[0]).toBe(ended);
      expect(row('data-item', String(ended))).toContain('Dash monthly · Card · ended');
      // The chart: five sign-ups and one cancellation today, one cancellation two days ago.
      expect(body).toContain('<svg class="chart" id="activity-chart"');
      const bar = (day: string, series: string) => Number(new RegExp(`data-label="${day}" data-series="${series}" data-value="(\\d+)"`).exec(body)![1]);
      expect(bar(day(0), 'signups')).toBeGreaterThanOrEqual(5);
      expect(bar(day(0), 'cancellations')).toBe(1);
      expect(bar(day(-2), 'cancellations')).toBe(1);
      expect(bar(day(-1), 'cancellations')).toBe(0);
      expect(body).toContain(`data-label="${day(-29)}"`);
      expect(body).not.toContain(`data-label="${day(-30)}"`);
      expect([...body.matchAll(/<rect /g)]).toHaveLength(60);
    });
  });
});
