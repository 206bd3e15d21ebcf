import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { STAND_IN_SOURCE_SETTINGS, createProduct } from '../helpers/store.js';
import { createTier } from '../helpers/tiers.js';

async function token(t: TestApp, c: WebClient, form: string): Promise<string> {
  return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
}
/** The inner text of the element with this id (its first text run). */
const textOf = (body: string, id: string) => {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(body);
  return m ? m[1]! : null;
};
/** The billing source table's row of one source. */
const sourceRow = (body: string, source: string) => new RegExp(`<tr data-source="${source}"[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';

const CARD_KEY = 'sk_test_never_shown_4f1c9a';
const CARD_WEBHOOK = 'whsec_never_shown_77ab31';

describe('the general settings page and the store’s truth (issue 40, part 4)', () => {
  let t: TestApp;
  let staff: WebClient;
  let superadmin: WebClient;
  beforeAll(async () => {
    t = await createTestApp({ config: { baseUrl: 'https://members.example.org' } });
    const s = await t.createUser({ permission: 5 });
    staff = await signIn(t, s.email, s.password);
    const a = await t.createUser({ permission: 10 });
    superadmin = await signIn(t, a.email, a.password);
  });
  afterAll(async () => t.close());

  const postProvider = (c: WebClient, tokenValue: string, fields: Record<string, string>) => c.postForm('/admin/settings/providers', { form_token: tokenValue, ...fields });

  it('is for staff: anonymous visitors go to sign-in, members get 403; the admin nav and the sub-nav link the two settings screens', async () => {
    const anon = await webClient(t).get('/admin/settings');
    expect(anon.statusCode).toBe(303);
    expect(anon.headers.location).toBe('/login?next=%2Fadmin%2Fsettings');
    const m = await t.createUser();
    expect((await (await signIn(t, m.email, m.password)).get('/admin/settings')).statusCode).toBe(403);
    const page = await staff.get('/admin/settings');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<a href="/admin/settings">Settings</a>');
    expect(page.body).toContain('<a href="/admin/settings" id="settings-nav-general" aria-current="page" style="font-weight:700;text-decoration:none">General</a>');
    expect(page.body).toContain('<a href="/admin/settings/subscriptions" id="settings-nav-subscriptions" >Store and subscriptions</a>');
    const subscriptions = await staff.get('/admin/settings/subscriptions');
    expect(subscriptions.body).toContain('<a href="/admin/settings" id="settings-nav-general" >General</a>');
  });

  it('the store switches alone do not open the store: with no billing source configured it is closed everywhere', async () => {
    await t.services.settings.set('products_active', true);
    await t.services.settings.set('subscriptions_active', true);
    expect(t.services.store.active()).toBe(false);
    const settingsPage = await staff.get('/admin/settings');
    expect(textOf(settingsPage.body, 'store-state')).toBe('The store is closed: no billing source is configured.');
    for (const source of ['card_processor', 'wallet_provider', 'ios_store', 'android_store']) {
      expect(sourceRow(settingsPage.body, source)).toContain(`data-configured="false"`);
      expect(sourceRow(settingsPage.body, source)).toContain('<td data-label="Status" class="status">Not configured</td>');
    }
    expect(sourceRow(settingsPage.body, 'card_processor')).toContain('<li>API key not set (checkout cannot start without it)</li>');
    expect(sourceRow(settingsPage.body, 'card_processor')).toContain('<li>webhook signing secret not set (payments cannot be recorded without it)</li>');
    expect(sourceRow(settingsPage.body, 'wallet_provider')).toContain('<li>webhook id not set (notifications cannot be verified without it)</li>');
    expect(sourceRow(settingsPage.body, 'ios_store')).toContain('<li>bundle id not set</li>');
    expect(sourceRow(settingsPage.body, 'ios_store')).toContain('<li>App Apple ID not set (the Production environment needs it)</li>');
    expect(sourceRow(settingsPage.body, 'android_store')).toContain('<li>service account JSON not set (the Play Developer API reads each purchase with it)</li>');
    expect(textOf((await staff.get('/admin/settings/subscriptions')).body, 'store-state')).toContain('The store is closed: both switches are on, but no billing source is configured.');
    expect((await staff.get('/admin')).body).toContain('The store is closed (no billing source is configured)');
    // The member-facing pages agree, and the API's store-only action refuses.
    const tier = await createTier(t, { name: 'truth_gold', level: 40 });
    const productId = await createProduct(t, { name: 'Truth gold', tierId: tier.tierId, refs: { pro_card_price_id: 'price_truth' } });
    expect((await webClient(t).get('/pricing')).body).toContain('id="store-closed"');
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    expect((await member.api('POST', '/api/v1/action/cart', { payload: { product_id: productId } })).statusCode).toBe(200);
    const cart = await member.get('/cart');
    expect(cart.body).toContain('id="checkout-closed"');
    const res = await member.postForm('/cart/checkout', { form_token: await token(t, member, 'cart-checkout') });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('<p class="error" role="alert" id="cart-error">The store is not open</p>');
    expect(await t.services.db.selectFrom('ord_orders').select('ord_order_id').where('ord_usr_user_id', '=', m.userId).execute()).toEqual([]);
  });

  it('staff see the status only: no provider form, and posting one is 403 with nothing changed', async () => {
    const page = await staff.get('/admin/settings');
    expect(page.body).toContain('id="providers-superadmin-only"');
    expect(page.body).not.toContain('action="/admin/settings/providers"');
    const res = await postProvider(staff, await token(t, staff, 'provider-settings-card_processor'), { source: 'card_processor', card_processor_api_key: 'sk_test_by_staff' });
    expect(res.statusCode).toBe(403);
    expect(t.services.settings.string('card_processor_api_key')).toBe('');
  });

  it('a superadmin sets the card processor: secrets are write-only (shown as set, never in the page), an empty field keeps them, “clear” removes them', async () => {
    const before = await superadmin.get('/admin/settings');
    expect(textOf(before.body, 'card_processor_api_key-state')).toBe('not set');
    const form = await token(t, superadmin, 'provider-settings-card_processor');
    const half = await postProvider(superadmin, form, { source: 'card_processor', card_processor_api_key: CARD_KEY, card_processor_webhook_secret: '', card_processor_api_base: '' });
    expect(half.statusCode).toBe(303);
    expect(half.headers.location).toBe('/admin/settings#provider-card_processor');
    expect(t.services.settings.string('card_processor_api_key')).toBe(CARD_KEY);
    const halfPage = await superadmin.get('/admin/settings');
    expect(textOf(halfPage.body, 'settings-saved')).toBe('Card processor (Stripe) settings saved. Still missing: webhook signing secret not set (payments cannot be recorded without it).');
    expect(textOf(halfPage.body, 'card_processor_api_key-state')).toBe('set');
    expect(halfPage.body).not.toContain(CARD_KEY);
    expect(t.services.store.active()).toBe(false);

    // The key field left empty keeps the key; the webhook secret completes the source and opens the store.
    const full = await postProvider(superadmin, form, { source: 'card_processor', card_processor_api_key: '', card_processor_webhook_secret: CARD_WEBHOOK, card_processor_api_base: 'http://127.0.0.1:1' });
    expect(full.statusCode).toBe(303);
    expect(t.services.settings.string('card_processor_api_key')).toBe(CARD_KEY);
    expect(t.services.settings.string('card_processor_webhook_secret')).toBe(CARD_WEBHOOK);
    expect(t.services.store.active()).toBe(true);
    const open = await superadmin.get('/admin/settings');
    expect(textOf(open.body, 'settings-saved')).toBe('Card processor (Stripe) settings saved: configured.');
    expect(textOf(open.body, 'store-state')).toBe('The store is open: products and subscriptions are on sale.');
    expect(sourceRow(open.body, 'card_processor')).toContain('<td data-label="Status" class="status">Configured</td>');
    expect(open.body).toMatch(/<input id="card_processor_api_base" name="card_processor_api_base" type="text" value="http:\/\/127.0.0.1:1">/);
    for (const secret of [CARD_KEY, CARD_WEBHOOK]) expect(open.body).not.toContain(secret);
    expect(open.body).toContain('<input id="card_processor_api_key" name="card_processor_api_key" type="password" autocomplete="new-password" value=""');
    expect((await staff.get('/admin')).body).not.toContain('id="store-closed"');
    expect(textOf((await staff.get('/admin/settings')).body, 'store-state')).toBe('The store is open: products and subscriptions are on sale.');

    // A bad value is refused without saving anything, and without echoing the secret typed with it.
    const ios = await token(t, superadmin, 'provider-settings-ios_store');
    const bad = await postProvider(superadmin, ios, { source: 'ios_store', ios_store_environment: 'Bogus', ios_store_bundle_id: 'org.example.bad', ios_store_api_private_key: 'PRIVATE-typed-with-an-error' });
    expect(bad.statusCode).toBe(400);
    expect(textOf(bad.body, 'ios_store_environment-error')).toBe('Must be one of Production, Sandbox, Xcode, LocalTesting');
    expect(bad.body).not.toContain('PRIVATE-typed-with-an-error');
    expect(t.services.settings.string('ios_store_bundle_id')).toBe('');
    expect(t.services.settings.string('ios_store_api_private_key')).toBe('');
  });

  it('checkout with an unreachable card processor answers 422 with a clear message, and the order is kept as failed', async () => {
    // Configured (key, secret) but its API base is a closed port: the provider cannot be reached.
    expect(t.services.store.active()).toBe(true);
    const tier = await createTier(t, { name: 'truth_silver', level: 30 });
    const productId = await createProduct(t, { name: 'Truth silver', price: 900, tierId: tier.tierId, refs: { pro_card_price_id: 'price_truth_silver' } });
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    expect((await member.api('POST', '/api/v1/action/cart', { payload: { product_id: productId } })).statusCode).toBe(200);
    expect((await member.get('/cart')).body).toContain('id="checkout"');
    const res = await member.postForm('/cart/checkout', { form_token: await token(t, member, 'cart-checkout') });
    expect(res.statusCode).toBe(422);
    const [order] = await t.services.db.selectFrom('ord_orders').select(['ord_order_id', 'ord_status', 'ord_error']).where('ord_usr_user_id', '=', m.userId).execute();
    expect(order!.ord_status).toBe(3);
    expect(order!.ord_error).toBeTruthy();
    expect(textOf(res.body, 'cart-error')).toBe(`The card processor could not start the checkout. Nothing was charged; your order #${order!.ord_order_id} is kept as failed. Please try again later.`);
  });

  it('with the store open through another source but no card processor, checkout is not offered, and a posted checkout is 422 with the order kept as failed', async () => {
    const form = await token(t, superadmin, 'provider-settings-card_processor');
    expect((await postProvider(superadmin, form, { source: 'card_processor', clear_card_processor_api_key: 'true' })).statusCode).toBe(303);
    expect(t.services.settings.string('card_processor_api_key')).toBe('');
    expect(textOf((await superadmin.get('/admin/settings')).body, 'card_processor_api_key-state')).toBe('not set');
    expect(t.services.store.active()).toBe(false);
    const ios = await token(t, superadmin, 'provider-settings-ios_store');
    const saved = await postProvider(superadmin, ios, { source: 'ios_store', ...STAND_IN_SOURCE_SETTINGS, ios_store_app_apple_id: '', ios_store_api_key_id: '', ios_store_api_issuer_id: '', ios_store_api_base: '' });
    expect(saved.statusCode).toBe(303);
    expect(t.services.settings.string('ios_store_bundle_id')).toBe('org.example.standin');
    expect(t.services.store.active()).toBe(true);

    const tier = await createTier(t, { name: 'truth_bronze', level: 20 });
    const productId = await createProduct(t, { name: 'Truth bronze', price: 500, tierId: tier.tierId, refs: { pro_card_price_id: 'price_truth_bronze' } });
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    expect((await member.api('POST', '/api/v1/action/cart', { payload: { product_id: productId } })).statusCode).toBe(200);
    const cart = await member.get('/cart');
    expect(cart.body).toContain('id="checkout-unavailable"');
    expect(cart.body).not.toContain('id="checkout"');
    const res = await member.postForm('/cart/checkout', { form_token: await token(t, member, 'cart-checkout') });
    expect(res.statusCode).toBe(422);
    expect(res.body).not.toContain('Something went wrong');
    const [order] = await t.services.db.selectFrom('ord_orders').select(['ord_order_id', 'ord_status', 'ord_error']).where('ord_usr_user_id', '=', m.userId).execute();
    expect(order).toEqual({ ord_order_id: order!.ord_order_id, ord_status: 3, ord_error: 'card processor not configured: API key not set (checkout cannot start without it)' });
    expect(textOf(res.body, 'cart-error')).toBe(`Card payments are not set up on this site yet, so checkout cannot start. Nothing was charged; your order #${order!.ord_order_id} is kept as failed.`);
  });

  it('staff switch Drive on from Settings; the tier form and the pricing page say when Drive is off site-wide', async () => {
    expect(t.services.settings.bool('drive_active')).toBe(false);
    const tier = await createTier(t, { name: 'truth_drive', level: 50, features: { drive_storage_bytes: 5_000_000_000, drive_share_links: true } });
    await createProduct(t, { name: 'Drive plan', price: 700, tierId: tier.tierId });
    expect((await staff.get('/admin/tiers/new')).body).toContain('id="drive-off"');
    expect((await webClient(t).get('/pricing')).body).toContain('<p class="notice warning" id="drive-off">Drive is off site-wide at the moment: the Drive features listed below are not available yet.</p>');
    expect(textOf((await staff.get('/admin/settings')).body, 'drive-state')).toBe('Drive is off site-wide.');
    const res = await staff.postForm('/admin/settings', { form_token: await token(t, staff, 'general-settings'), drive_active: 'true' });
    expect(res.statusCode).toBe(303);
    expect(t.services.settings.bool('drive_active')).toBe(true);
    const page = await staff.get('/admin/settings');
    expect(textOf(page.body, 'settings-saved')).toBe('Settings saved.');
    expect(textOf(page.body, 'drive-state')).toBe('Drive is on.');
    expect(page.body).toMatch(/<input id="drive_active" name="drive_active" type="checkbox" value="true" checked>/);
    expect((await staff.get('/admin/tiers/new')).body).not.toContain('id="drive-off"');
    expect((await webClient(t).get('/pricing')).body).not.toContain('id="drive-off"');
    const off = await staff.postForm('/admin/settings', { form_token: await token(t, staff, 'general-settings'), drive_active: 'false' });
    expect(off.statusCode).toBe(303);
    expect(t.services.settings.bool('drive_active')).toBe(false);
  });

  it('the site name is in every page title and the header; the sender address is the From of sent mail; bad values are refused', async () => {
    const form = await token(t, staff, 'general-settings');
    const bad = await staff.postForm('/admin/settings', { form_token: form, site_name: '  ', mail_from_address: 'not an address' });
    expect(bad.statusCode).toBe(400);
    expect(textOf(bad.body, 'site_name-error')).toBe('Must be one line of text, not empty');
    expect(textOf(bad.body, 'mail_from_address-error')).toBe('Must be an email address such as members@example.org');
    expect(t.services.settings.string('site_name')).toBe('Gatehouse');

    const res = await staff.postForm('/admin/settings', { form_token: form, site_name: 'Lighthouse <Club>', mail_from_address: 'members@example.org' });
    expect(res.statusCode).toBe(303);
    expect(t.services.settings.string('site_name')).toBe('Lighthouse <Club>');
    const home = await webClient(t).get('/pricing');
    expect(home.body).toContain('<title>Pricing · Lighthouse &lt;Club&gt;</title>');
    expect(home.body).toContain('<a class="brand" href="/" id="site-name">Lighthouse &lt;Club&gt;</a>');
    expect((await staff.get('/admin/settings')).body).toContain('<title>Settings · Lighthouse &lt;Club&gt;</title>');

    const { email } = await t.createUser();
    expect((await t.request({ method: 'POST', url: '/api/v1/action/password_reset_1', payload: { email } })).statusCode).toBe(200);
    const rows = await t.services.db.selectFrom('mob_mail_outbox').select(['mob_from', 'mob_subject']).where('mob_to', '=', email).execute();
    expect(rows).toEqual([{ mob_from: 'members@example.org', mob_subject: 'Reset your Lighthouse <Club> password' }]);
  });
});
