import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { validateAppNavigation } from '../../src/settings/app-navigation.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier } from '../helpers/tiers.js';

/** The top bar's links (id and path, in order) and whether it has the phone menu button. */
function topBar(body: string) {
  const header = /<header>([\s\S]*?)<\/header>/.exec(body)?.[1] ?? '';
  const nav = /<nav class="site" id="site-nav" aria-label="Site">([\s\S]*?)<\/nav>/.exec(header)?.[1] ?? '';
  return {
    brand: /<a class="brand" href="\/"[^>]*>/.test(header),
    links: [...nav.matchAll(/<a href="([^"]+)" id="([^"]+)">([^<]+)<\/a>/g)].map((m) => `${m[3]} ${m[1]}`),
    menuButton: /<details class="menu" id="site-menu">\s*<summary id="menu-button" aria-label="Menu" aria-controls="site-nav">/.test(header),
    signOut: nav.includes('<form method="post" action="/logout">'),
    user: /<a class="who" id="header-user"[^>]*>([^<]*)<\/a>/.exec(nav)?.[1] ?? null,
  };
}

const fullDrive = { drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 100_000_000, drive_share_links: true, drive_versioning_depth: 3 };

describe('the top bar per viewer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  async function member(features: Record<string, number | boolean> | null, permission = 0): Promise<WebClient> {
    const u = await t.createUser({ permission, firstName: 'Nora', lastName: 'Navigator' });
    if (features) {
      const tier = await createTier(t, { level: 10, features });
      await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    }
    return signIn(t, u.email, u.password);
  }

  it('anonymous visitors see pricing, sign-in and registration in a menu with a labelled button', async () => {
    const res = await webClient(t).get('/pricing');
    expect(res.statusCode).toBe(200);
    const bar = topBar(res.body);
    expect(bar).toEqual({ brand: true, links: ['Pricing /pricing', 'Sign in /login', 'Register /register'], menuButton: true, signOut: false, user: null });
  });

  it('a member without Drive sees subscription, security and app sessions; no Drive, Mail or Dashboard', async () => {
    await t.services.settings.set('drive_active', true);
    const tierless = await member(null);
    expect(topBar((await tierless.get('/profile/subscription')).body)).toEqual({
      brand: true,
      links: ['Subscription /profile/subscription', 'Security /profile/security', 'App sessions /profile/app-sessions'],
      menuButton: true,
      signOut: true,
      user: 'Nora Navigator',
    });
    // A tier without storage (or without uploads) does not make Drive usable.
    for (const features of [{ drive_storage_bytes: 0, drive_max_file_bytes: 100 }, { drive_storage_bytes: 1000, drive_max_file_bytes: 0 }]) {
      const c = await member(features);
      expect(topBar((await c.get('/profile/subscription')).body).links[0]).toBe('Subscription /profile/subscription');
    }
  });

  it('a member whose tier has Drive storage sees Drive while drive_active is on', async () => {
    const c = await member(fullDrive);
    await t.services.settings.set('drive_active', true);
    expect(topBar((await c.get('/profile/subscription')).body).links).toEqual([
      'Drive /drive',
      'Subscription /profile/subscription',
      'Security /profile/security',
      'App sessions /profile/app-sessions',
    ]);
    await t.services.settings.set('drive_active', false);
    expect(topBar((await c.get('/profile/subscription')).body).links[0]).toBe('Subscription /profile/subscription');
  });

  it('Mail appears while the mailbox plugin is active, and its page answers; inactive, neither', async () => {
    const c = await member(fullDrive);
    await t.services.settings.set('drive_active', true);
    await t.services.plugins.setActive('mailbox', true);
    try {
      const links = topBar((await c.get('/profile/security')).body).links;
      expect(links.slice(0, 3)).toEqual(['Drive /drive', 'Mail /mail', 'Subscription /profile/subscription']);
      expect((await c.get('/mail')).statusCode).toBe(200);
    } finally {
      await t.services.plugins.setActive('mailbox', false);
    }
    expect(topBar((await c.get('/profile/security')).body).links).not.toContain('Mail /mail');
    expect((await c.get('/mail')).statusCode).toBe(404);
  });

  it('staff also see the dashboard; the name shows once, before sign-out', async () => {
    const staff = await member(null, 5);
    const bar = topBar((await staff.get('/admin')).body);
    expect(bar.links).toEqual(['Subscription /profile/subscription', 'Security /profile/security', 'App sessions /profile/app-sessions', 'Dashboard /admin']);
    expect(bar.user).toBe('Nora Navigator');
    expect(bar.signOut).toBe(true);
  });

  it('every page links the favicon; /favicon.svg is an SVG and /favicon.ico points to it', async () => {
    const page = await webClient(t).get('/login');
    expect(page.body).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    const icon = await t.request({ method: 'GET', url: '/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>[\s\S]*<\/svg>\s*$/);
    const ico = await t.request({ method: 'GET', url: '/favicon.ico' });
    expect(ico.statusCode).toBe(301);
    expect(ico.headers.location).toBe('/favicon.svg');
  });
});

describe('app navigation default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('is valid and serves subscription, Drive (while drive_active) and security, pinned for ios and android', async () => {
    expect(validateAppNavigation(t.services.settings.json('app_navigation'))).toBeNull();
    const u = await t.createUser();
    const { headers } = await t.login(u.email, u.password);
    const get = async (app?: string) => (await t.request({ method: 'GET', url: '/api/v1/app/navigation', headers: { ...headers, ...(app ? { client_app: app } : {}) } })).json;
    const off = await get('ios');
    expect(off.data).toEqual({
      entries: [
        { slug: 'subscription', label: 'Subscription', destination: { type: 'web', url: '/profile/subscription' } },
        { slug: 'security', label: 'Security', destination: { type: 'web', url: '/profile/security' } },
      ],
      tabs: ['subscription', 'security'],
    });
    await t.services.settings.set('drive_active', true);
    const on = await get('android');
    expect(on.data.entries.map((e: { slug: string }) => e.slug)).toEqual(['subscription', 'drive', 'security']);
    expect(on.data.entries[1]).toEqual({ slug: 'drive', label: 'Drive', destination: { type: 'native', screen: 'drive', fallback_url: '/drive' } });
    expect(on.data.tabs).toEqual(['subscription', 'drive', 'security']);
    expect((await get()).data.tabs).toEqual([]);
  });
});

describe('the cart shows prices and a total', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const product = async (name: string, extra: Record<string, unknown>) => subscriptionProduct(t, { name, tierId: null, period: null, extra });
  const cells = (body: string, id: number) => {
    const row = new RegExp(`<tr data-product="${id}">([\\s\\S]*?)</tr>`).exec(body)?.[1] ?? '';
    return [...row.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
  };
  const totals = (body: string) => [...body.matchAll(/<tr class="total" data-currency="(\w+)"><th scope="row" colspan="3">([^<]*)<\/th><td class="num cart-total" data-label="Total">([^<]*)<\/td><\/tr>/g)].map((m) => [m[1], m[2], m[3]]);

  it('each line with its unit price and amount, and the total in the products’ currency', async () => {
    const tee = await product('T-shirt', { pro_price: 1250, pro_currency: 'usd' });
    const mug = await product('Mug', { pro_price: 499, pro_currency: 'usd' });
    const c = webClient(t);
    await c.get('/cart');
    expect((await c.api('POST', '/api/v1/action/cart', { payload: { product_id: tee, quantity: 2 } })).statusCode).toBe(200);
    expect((await c.api('POST', '/api/v1/action/cart', { payload: { product_id: mug } })).statusCode).toBe(200);
    const page = await c.get('/cart');
    expect(cells(page.body, tee)).toEqual(['T-shirt', '$12.50', '2', '$25.00']);
    expect(cells(page.body, mug)).toEqual(['Mug', '$4.99', '1', '$4.99']);
    expect(totals(page.body)).toEqual([['usd', 'Total', '$29.99']]);
    expect(page.body).toContain('<p id="cart-count">3 items.</p>');
    expect(page.body).not.toContain('id="cart-unpriced"');
    expect(page.body).not.toContain('id="cart-currencies"');
  });

  it('a product without a price shows a dash and is left out of the total; mixed currencies get a total each and a warning', async () => {
    const yen = await product('Print', { pro_price: 1500, pro_currency: 'jpy' });
    const eur = await product('Book', { pro_price: 2000, pro_currency: 'eur' });
    const free = await product('Sample', { pro_price: null });
    const c = webClient(t);
    await c.get('/cart');
    for (const id of [yen, eur, free]) expect((await c.api('POST', '/api/v1/action/cart', { payload: { product_id: id } })).statusCode).toBe(200);
    const page = await c.get('/cart');
    expect(cells(page.body, yen)).toEqual(['Print', '¥1,500', '1', '¥1,500']);
    expect(cells(page.body, free)).toEqual(['Sample', '—', '1', '—']);
    expect(totals(page.body)).toEqual([
      ['jpy', 'Total (JPY)', '¥1,500'],
      ['eur', 'Total (EUR)', '€20.00'],
    ]);
    expect(page.body).toContain('<p class="help" id="cart-unpriced">One product has no price yet and is not in the total.</p>');
    expect(page.body).toContain('id="cart-currencies"');
  });
});

describe('features of inactive plugins are not listed to members', () => {
  let t: TestApp;
  let memberClient: WebClient;
  beforeAll(async () => {
    t = await createTestApp({ settings: { products_active: true, subscriptions_active: true } });
    const basic = await createTier(t, { name: 'f_basic', displayName: 'Basic', level: 10, features: { drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 10_000_000, mailbox_fleet_slot: false, mailbox_fleet_max_domains: 0 } });
    const plus = await createTier(t, { name: 'f_plus', displayName: 'Plus', level: 20, features: { drive_storage_bytes: 5_000_000_000, drive_max_file_bytes: 10_000_000, mailbox_fleet_slot: true, mailbox_fleet_max_domains: 5 } });
    await subscriptionProduct(t, { name: 'Basic', tierId: basic.tierId, extra: { pro_price: 500, pro_currency: 'usd' } });
    await subscriptionProduct(t, { name: 'Plus', tierId: plus.tierId, extra: { pro_price: 900, pro_currency: 'usd' } });
    const u = await t.createUser();
    await t.services.tiers.membership.assignManually(u.userId, plus.tierId, null);
    memberClient = await signIn(t, u.email, u.password);
  });
  afterAll(async () => t.close());

  const pricingFeatures = (body: string) => [...new Set([...body.matchAll(/<li data-feature="([a-z_]+)"/g)].map((m) => m[1]))];
  const subscriptionFeatures = (body: string) => [...body.matchAll(/<tr data-feature="([a-z_]+)"><td>([^<]*)<\/td><td>([^<]*)<\/td>/g)].map((m) => `${m[1]}=${m[3]}`);

  it('pricing and the member’s subscription leave out an inactive plugin’s features, and list them while it is active', async () => {
    const pricing = await memberClient.get('/pricing');
    expect(pricingFeatures(pricing.body)).toEqual(['drive_storage_bytes']);
    expect(pricingFeatures((await webClient(t).get('/pricing')).body)).toEqual(['drive_storage_bytes']);
    const sub = await memberClient.get('/profile/subscription');
    expect(subscriptionFeatures(sub.body)).toEqual(['drive_storage_bytes=5 GB', 'drive_max_file_bytes=10 MB', 'drive_share_links=No', 'drive_versioning_depth=0']);

    await t.services.plugins.setActive('mailbox', true);
    try {
      expect(pricingFeatures((await memberClient.get('/pricing')).body)).toEqual(['drive_storage_bytes', 'mailbox_fleet_slot', 'mailbox_fleet_max_domains']);
      expect(subscriptionFeatures((await memberClient.get('/profile/subscription')).body)).toEqual([
        'drive_storage_bytes=5 GB',
        'drive_max_file_bytes=10 MB',
        'drive_share_links=No',
        'drive_versioning_depth=0',
        'mailbox_fleet_slot=Yes',
        'mailbox_fleet_max_domains=5',
      ]);
    } finally {
      await t.services.plugins.setActive('mailbox', false);
    }
  });
});

describe('byte sizes round trip: the tier form and the Drive page agree', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { drive_active: true } });
  });
  afterAll(async () => t.close());

  it('1 GB entered on the tier form is stored as 1,000,000,000 bytes and shows as 1 GB on the tier page, the Drive page and the subscription', async () => {
    const s = await t.createUser({ permission: 5 });
    const staff = await signIn(t, s.email, s.password);
    await staff.get('/admin/tiers/new');
    const token = formToken((await t.services.webSessions.load(staff.jar.cookies.get('gatehouse_session')))!, 'tier-edit');
    const created = await staff.postForm('/admin/tiers/new', {
      form_token: token,
      sbt_name: 'gigabyte',
      sbt_display_name: 'Gigabyte',
      sbt_tier_level: '10',
      sbt_is_active: 'true',
      feature_drive_storage_bytes: '1',
      feature_drive_storage_bytes_unit: 'GB',
      feature_drive_max_file_bytes: '250',
      feature_drive_max_file_bytes_unit: 'MB',
      feature_drive_versioning_depth: '2',
    });
    expect(created.statusCode).toBe(303);
    const row = await t.services.db.selectFrom('sbt_subscription_tiers').select(['sbt_subscription_tier_id', 'sbt_features']).where('sbt_name', '=', 'gigabyte').executeTakeFirstOrThrow();
    expect(row.sbt_features).toMatchObject({ drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 250_000_000, drive_versioning_depth: 2 });

    // The tier page: integer features are number inputs, byte sizes a number with the unit picked.
    const tierPage = (await staff.get(`/admin/tiers/${row.sbt_subscription_tier_id}`)).body;
    expect(tierPage).toMatch(/<input id="feature_drive_storage_bytes" name="feature_drive_storage_bytes" type="number" step="any" min="0" placeholder="0" value="1"><select id="feature_drive_storage_bytes_unit" name="feature_drive_storage_bytes_unit" aria-label="Unit for Drive storage">/);
    expect(/<select id="feature_drive_storage_bytes_unit"[^>]*>(.*?)<\/select>/.exec(tierPage)?.[1]).toContain('<option value="GB" selected>GB</option>');
    expect(/<select id="feature_drive_max_file_bytes_unit"[^>]*>(.*?)<\/select>/.exec(tierPage)?.[1]).toContain('<option value="MB" selected>MB</option>');
    expect(tierPage).toMatch(/<input id="feature_drive_versioning_depth" name="feature_drive_versioning_depth" type="number" step="1" min="0" max="1000"[^>]*value="2">/);
    expect(tierPage).toMatch(/<input id="feature_mailbox_fleet_max_domains" name="feature_mailbox_fleet_max_domains" type="number" step="1" min="0" max="10000"/);

    const m = await t.createUser();
    await t.services.tiers.membership.assignManually(m.userId, row.sbt_subscription_tier_id, null);
    const member = await signIn(t, m.email, m.password);
    const drive = await member.get('/drive');
    expect(drive.statusCode).toBe(200);
    expect(drive.body).toContain('<span id="quota-text"><strong>0 B</strong> of 1 GB used</span>');
    const sub = await member.get('/profile/subscription');
    expect(sub.body).toContain('<tr data-feature="drive_storage_bytes"><td>Drive storage</td><td>1 GB</td></tr>');
    expect(sub.body).toContain('<tr data-feature="drive_max_file_bytes"><td>Largest Drive file</td><td>250 MB</td></tr>');
  });

  it('a value outside the bounds or not a number re-renders the form with the message, never a server error', async () => {
    const s = await t.createUser({ permission: 5 });
    const staff = await signIn(t, s.email, s.password);
    await staff.get('/admin/tiers/new');
    const token = formToken((await t.services.webSessions.load(staff.jar.cookies.get('gatehouse_session')))!, 'tier-edit');
    const base = { form_token: token, sbt_name: 'bounded', sbt_display_name: 'Bounded', sbt_tier_level: '1', sbt_is_active: 'true' };
    for (const [fields, id, message] of [
      [{ feature_drive_versioning_depth: '1001' }, 'feature_drive_versioning_depth', 'Must be at most 1000.'],
      [{ feature_drive_versioning_depth: '2.5' }, 'feature_drive_versioning_depth', 'Enter a whole number.'],
      [{ feature_drive_storage_bytes: '-2', feature_drive_storage_bytes_unit: 'GB' }, 'feature_drive_storage_bytes', 'Must be at least 0.'],
      [{ feature_drive_storage_bytes: 'lots', feature_drive_storage_bytes_unit: 'GB' }, 'feature_drive_storage_bytes', 'Enter a size such as 500 MB, 2 GB or 0.'],
      [{ feature_drive_storage_bytes: '9999999', feature_drive_storage_bytes_unit: 'TB' }, 'feature_drive_storage_bytes', 'The size is too large.'],
      [{ feature_drive_storage_bytes: '1', feature_drive_storage_bytes_unit: 'PB' }, null, null],
    ] as const) {
      const res = await staff.postForm('/admin/tiers/new', { ...base, ...fields });
      if (id === null) {
        // An unknown unit from a tampered form counts as bytes.
        expect(res.statusCode).toBe(303);
        continue;
      }
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(new RegExp(`id="${id}-error"[^>]*>([^<]*)<`).exec(res.body)?.[1]).toBe(message);
    }
  });
});
