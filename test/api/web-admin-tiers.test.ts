import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Product } from '../../src/models/product.js';
import { productFields } from '../../src/web/pages/admin/products.js';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { changeRows, createTier, tierMemberships } from '../helpers/tiers.js';

const PROVIDER_COLUMNS = ['pro_card_price_id', 'pro_wallet_plan_id', 'pro_ios_product_id', 'pro_android_product_id'];

async function token(t: TestApp, c: WebClient, form: string): Promise<string> {
  return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
}

/** Posts a form with repeated names, as a browser does for a checked box after its hidden 'false'. */
async function postPairs(t: TestApp, c: WebClient, url: string, pairs: Array<[string, string]>) {
  const res = await t.request({
    method: 'POST',
    url,
    headers: { cookie: c.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(pairs).toString(),
  });
  c.jar.absorb(res);
  return res;
}

const tierRow = (t: TestApp, id: number) => t.services.db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_subscription_tier_id', '=', id).executeTakeFirstOrThrow();
const tierCount = async (t: TestApp) =>
  Number((await t.services.db.selectFrom('sbt_subscription_tiers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
/** The text of the error shown under a field, or null when there is none. */
const fieldError = (body: string, id: string) => {
  const m = new RegExp(`id="${id}-error"[^>]*>([^<]*)<`).exec(body);
  return m ? m[1]! : null;
};

async function createProduct(t: TestApp, name = 'Pro membership'): Promise<number> {
  const staff = await t.staffHeaders();
  const form = new URLSearchParams({ pro_name: name, pro_link: name.toLowerCase().replace(/\W+/g, '-') }).toString();
  const res = await t.request({ method: 'POST', url: '/api/v1/Product', headers: { ...staff.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
  expect(res.statusCode).toBe(200);
  return res.json.data.pro_product_id;
}

describe('admin tier, tier member and product screens', () => {
  let t: TestApp;
  let staff: WebClient;
  let staffId: number;
  beforeAll(async () => {
    t = await createTestApp();
    const s = await t.createUser({ permission: 5 });
    staffId = s.userId;
    staff = await signIn(t, s.email, s.password);
  });
  afterAll(async () => t.close());

  it('sends anonymous visitors to sign-in and answers 403 to non-staff on every admin page, changing nothing', async () => {
    const tier = await createTier(t, { name: 'guarded', level: 10 });
    const productId = await createProduct(t, 'Guarded');
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    await t.services.tiers.membership.assignManually(m.userId, tier.tierId, null);
    const pages = [
      '/admin/tiers',
      '/admin/tiers/new',
      `/admin/tiers/${tier.tierId}`,
      `/admin/tiers/${tier.tierId}/members`,
      `/admin/tiers/${tier.tierId}/members?q=example`,
      '/admin/products',
      `/admin/products/${productId}`,
      '/admin/api-keys',
      '/admin/settings/subscriptions',
    ];
    for (const url of pages) {
      const anon = await webClient(t).get(url);
      expect(anon.statusCode, url).toBe(303);
      expect(anon.headers.location, url).toBe(`/login?next=${encodeURIComponent(url)}`);
      const refused = await member.get(url);
      expect(refused.statusCode, url).toBe(403);
      expect(refused.body, url).toContain('This page is for staff only.');
      expect((await staff.get(url)).statusCode, url).toBe(200);
    }
    const posts: Array<[string, string, Record<string, string>]> = [
      ['/admin/tiers/new', 'tier-edit', { sbt_name: 'sneaky', sbt_display_name: 'Sneaky', sbt_tier_level: '99' }],
      [`/admin/tiers/${tier.tierId}`, 'tier-edit', { sbt_name: 'guarded', sbt_display_name: 'Renamed', sbt_tier_level: '10' }],
      [`/admin/tiers/${tier.tierId}/members`, 'tier-members', { user_id: String(m.userId) }],
      [`/admin/tiers/${tier.tierId}/members/${m.userId}/remove`, 'tier-members', {}],
      [`/admin/products/${productId}`, 'product-edit', { pro_name: 'Hijacked', pro_sbt_subscription_tier_id: String(tier.tierId) }],
      ['/admin/api-keys', 'api-keys', { owner_email: m.email, permission: '4' }],
      ['/admin/settings/subscriptions', 'subscription-settings', { tier_gate_preview_length: '5' }],
    ];
    const keysBefore = await t.services.db.selectFrom('apk_api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const tiersBefore = await tierCount(t);
    for (const [url, form, fields] of posts) {
      const res = await member.postForm(url, { form_token: await token(t, member, form), ...fields });
      expect(res.statusCode, url).toBe(403);
    }
    expect(await tierCount(t)).toBe(tiersBefore);
    expect((await tierRow(t, tier.tierId)).sbt_display_name).toBe('GUARDED');
    expect(await tierMemberships(t, m.userId)).toHaveLength(1);
    const product = await t.request({ method: 'GET', url: `/api/v1/Product/${productId}`, headers: (await t.staffHeaders()).headers });
    expect(product.json.data).toMatchObject({ pro_name: 'Guarded', pro_sbt_subscription_tier_id: null });
    const keysAfter = await t.services.db.selectFrom('apk_api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(keysAfter.n)).toBe(Number(keysBefore.n) + 1); // the staffHeaders key above, nothing from the member
    expect(t.services.settings.int('tier_gate_preview_length')).toBe(0);
  });

  describe('tiers', () => {
    it('the tier form has one typed input per declared feature, core first, with min/max and the fallback shown', async () => {
      const res = await staff.get('/admin/tiers/new');
      expect(res.statusCode).toBe(200);
      const defs = t.services.tiers.registry.all();
      expect(defs.map((d) => d.key)).toEqual(expect.arrayContaining(['drive_storage_bytes', 'drive_share_links', 'mailbox_fleet_slot', 'mailbox_fleet_max_domains']));
      const positions = defs.map((d) => res.body.indexOf(`id="feature_${d.key}"`));
      for (const [i, d] of defs.entries()) expect(positions[i], d.key).toBeGreaterThan(0);
      const lastCore = Math.max(...defs.filter((d) => d.source === 'core').map((d) => res.body.indexOf(`id="feature_${d.key}"`)));
      const firstPlugin = Math.min(...defs.filter((d) => d.source !== 'core').map((d) => res.body.indexOf(`id="feature_${d.key}"`)));
      expect(lastCore).toBeLessThan(firstPlugin);
      expect(res.body).toMatch(/<input id="feature_drive_versioning_depth" name="feature_drive_versioning_depth" type="number" step="1" min="0" max="1000"/);
      expect(res.body).toMatch(/<input id="feature_mailbox_fleet_max_domains" name="feature_mailbox_fleet_max_domains" type="number" step="1" min="0" max="10000"/);
      expect(res.body).toContain('<input type="hidden" name="feature_drive_share_links" value="false"><input id="feature_drive_share_links" name="feature_drive_share_links" type="checkbox" value="true"');
      expect(res.body).toContain('Fallback when the tier has no value: 0.');
      expect(res.body).toContain('Fallback when the tier has no value: off.');
    });

    it('refuses values outside min/max and non-numbers with the message next to each field, creating nothing', async () => {
      const before = await tierCount(t);
      const res = await postPairs(t, staff, '/admin/tiers/new', [
        ['form_token', await token(t, staff, 'tier-edit')],
        ['sbt_name', ''],
        ['sbt_display_name', 'Gold'],
        ['sbt_tier_level', 'ten'],
        ['sbt_is_active', 'false'],
        ['sbt_is_active', 'true'],
        ['feature_drive_versioning_depth', '1001'],
        ['feature_drive_storage_bytes', '-5'],
        ['feature_mailbox_fleet_max_domains', '3.5'],
      ]);
      expect(res.statusCode).toBe(400);
      expect(fieldError(res.body, 'feature_drive_versioning_depth')).toBe('Must be at most 1000.');
      expect(fieldError(res.body, 'feature_drive_storage_bytes')).toBe('Must be at least 0.');
      expect(fieldError(res.body, 'feature_mailbox_fleet_max_domains')).toBe('Enter a whole number.');
      expect(fieldError(res.body, 'sbt_name')).toBe('Enter the tier’s internal name.');
      expect(fieldError(res.body, 'sbt_tier_level')).toBe('Enter a whole number of 0 or more (higher is a better tier).');
      expect(fieldError(res.body, 'sbt_display_name')).toBeNull();
      // What was typed is kept.
      expect(res.body).toContain('value="1001"');
      expect(await tierCount(t)).toBe(before);
    });

    it('creates a tier with typed feature values and its group; unchecked boxes save false, empty numbers stay unset', async () => {
      const res = await postPairs(t, staff, '/admin/tiers/new', [
        ['form_token', await token(t, staff, 'tier-edit')],
        ['sbt_name', 'gold'],
        ['sbt_display_name', 'Gold'],
        ['sbt_tier_level', '20'],
        ['sbt_description', 'The <b>best</b> tier'],
        ['sbt_is_active', 'false'],
        ['sbt_is_active', 'true'],
        ['feature_drive_storage_bytes', '1000000'],
        ['feature_drive_max_file_bytes', ''],
        ['feature_drive_share_links', 'false'],
        ['feature_drive_share_links', 'true'],
        ['feature_drive_versioning_depth', '1000'],
        ['feature_mailbox_fleet_slot', 'false'],
        ['feature_mailbox_fleet_max_domains', '0'],
      ]);
      expect(res.statusCode).toBe(303);
      // POST-redirect-GET: the address carries no "saved" flag; the notice is a one-time flash.
      const id = Number(/^\/admin\/tiers\/(\d+)$/.exec(String(res.headers.location))![1]);
      const row = await tierRow(t, id);
      expect(row).toMatchObject({ sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: 20, sbt_description: 'The <b>best</b> tier', sbt_is_active: true });
      expect(row.sbt_features).toEqual({ drive_storage_bytes: 1000000, drive_share_links: true, drive_versioning_depth: 1000, mailbox_fleet_slot: false, mailbox_fleet_max_domains: 0 });
      const group = await t.services.db.selectFrom('grp_groups').selectAll().where('grp_group_id', '=', row.sbt_grp_group_id).executeTakeFirstOrThrow();
      expect(group).toMatchObject({ grp_name: 'gold', grp_category: 'subscription_tier', grp_usr_user_id_created: staffId });

      const page = await staff.get(String(res.headers.location));
      expect(page.body).toContain('<p class="notice" role="status" id="tier-saved">Tier created.</p>');
      expect((await staff.get(String(res.headers.location))).body, 'a reload does not bring the notice back').not.toContain('id="tier-saved"');
      // Sizes are shown as a number in the largest unit that states them exactly, the unit picked beside it.
      expect(page.body).toMatch(/<input id="feature_drive_storage_bytes" name="feature_drive_storage_bytes" type="number" step="any" min="0"[^>]*value="1">/);
      expect(page.body).toContain('<option value="MB" selected>MB</option>');
      // The newline after <textarea> is eaten by the parser, so a description's own first line break survives.
      expect(page.body).toContain('rows="4">\nThe &lt;b&gt;best&lt;/b&gt; tier</textarea>');
      // The coverage audit lists exactly the declared feature with no explicit value.
      expect(page.body).toContain('id="coverage-warning"');
      expect([...page.body.matchAll(/<li data-feature="([a-z_]+)"/g)].map((m) => m[1])).toEqual(['drive_max_file_bytes']);
      expect(page.body).toMatch(/<input id="feature_drive_versioning_depth"[^>]*value="1000">/);
      expect(page.body).toMatch(/<input id="feature_drive_share_links" name="feature_drive_share_links" type="checkbox" value="true" checked>/);
    });

    it('edits a tier: an unchecked box (only its hidden false posted) saves false, a filled gap clears the audit warning', async () => {
      const tier = await createTier(t, { name: 'silver', level: 10, features: { drive_share_links: true } });
      const res = await postPairs(t, staff, `/admin/tiers/${tier.tierId}`, [
        ['form_token', await token(t, staff, 'tier-edit')],
        ['sbt_name', 'silver_plus'],
        ['sbt_display_name', 'Silver Plus'],
        ['sbt_tier_level', '15'],
        ['sbt_description', ''],
        ['sbt_is_active', 'false'],
        ['feature_drive_storage_bytes', '10'],
        ['feature_drive_max_file_bytes', '5'],
        ['feature_drive_share_links', 'false'],
        ['feature_drive_versioning_depth', '0'],
        ['feature_mailbox_fleet_slot', 'false'],
        ['feature_mailbox_fleet_max_domains', '2'],
      ]);
      expect(res.statusCode).toBe(303);
      const row = await tierRow(t, tier.tierId);
      expect(row).toMatchObject({ sbt_name: 'silver_plus', sbt_display_name: 'Silver Plus', sbt_tier_level: 15, sbt_description: null, sbt_is_active: false });
      expect(row.sbt_features).toEqual({ drive_storage_bytes: 10, drive_max_file_bytes: 5, drive_share_links: false, drive_versioning_depth: 0, mailbox_fleet_slot: false, mailbox_fleet_max_domains: 2 });
      const group = await t.services.db.selectFrom('grp_groups').select('grp_name').where('grp_group_id', '=', tier.groupId).executeTakeFirstOrThrow();
      expect(group.grp_name).toBe('silver_plus');
      const page = await staff.get(`/admin/tiers/${tier.tierId}`);
      expect(page.body).not.toContain('id="coverage-warning"');
      expect(page.body).toMatch(/<input id="sbt_is_active" name="sbt_is_active" type="checkbox" value="true" >/);
    });

    it('shows the service’s refusal of a duplicate name next to the name field', async () => {
      await createTier(t, { name: 'taken', level: 5 });
      const other = await createTier(t, { name: 'free', level: 6 });
      const res = await postPairs(t, staff, `/admin/tiers/${other.tierId}`, [
        ['form_token', await token(t, staff, 'tier-edit')],
        ['sbt_name', 'taken'],
        ['sbt_display_name', 'Free'],
        ['sbt_tier_level', '6'],
        ['sbt_is_active', 'false'],
        ['sbt_is_active', 'true'],
      ]);
      expect(res.statusCode).toBe(400);
      expect(fieldError(res.body, 'sbt_name')).toBe('Tier already exists.');
      expect((await tierRow(t, other.tierId)).sbt_name).toBe('free');
    });

    it('refuses a stale form token and answers 404 for an unknown tier', async () => {
      const tier = await createTier(t, { name: 'tokened', level: 3 });
      const stale = await staff.postForm(`/admin/tiers/${tier.tierId}`, { form_token: 'f'.repeat(64), sbt_name: 'x', sbt_display_name: 'X', sbt_tier_level: '1' });
      expect(stale.statusCode).toBe(403);
      expect((await tierRow(t, tier.tierId)).sbt_name).toBe('tokened');
      expect((await staff.get('/admin/tiers/999999')).statusCode).toBe(404);
      expect((await staff.get('/admin/tiers/abc/members')).statusCode).toBe(404);
    });

    it('lists tiers with display name, level, active flag and member count', async () => {
      const tier = await createTier(t, { name: 'counted', displayName: 'Counted', level: 42, active: true });
      for (let i = 0; i < 2; i++) await t.services.tiers.membership.assignManually((await t.createUser()).userId, tier.tierId, null);
      const res = await staff.get('/admin/tiers');
      const row = new RegExp(`<tr data-tier="counted">[\\s\\S]*?</tr>`).exec(res.body)![0];
      expect(row).toContain('<td data-label="Display name">Counted</td><td data-label="Level">42</td><td class="active" data-label="Active">yes</td>');
      expect(row).toContain('<td class="members" data-label="Members">2</td>');
    });
  });

  describe('tier members', () => {
    it('finds a user by email and adds them as a manual assignment, recorded in change tracking', async () => {
      const tier = await createTier(t, { name: 'club', displayName: 'Club', level: 10 });
      const u = await t.createUser({ email: `findme-${Date.now()}@example.com` });
      const search = await staff.get(`/admin/tiers/${tier.tierId}/members?q=FINDME`);
      expect(search.statusCode).toBe(200);
      expect(search.body).toContain(`<tr data-email="${u.email}">`);
      expect(search.body).toContain(`name="user_id" value="${u.userId}"`);
      t.clock.set('2026-03-02T09:30:00Z');
      const add = await staff.postForm(`/admin/tiers/${tier.tierId}/members`, { form_token: await token(t, staff, 'tier-members'), user_id: String(u.userId), q: 'findme' });
      expect(add.statusCode).toBe(303);
      expect(add.headers.location).toBe(`/admin/tiers/${tier.tierId}/members`);
      const rows = await tierMemberships(t, u.userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ grm_sbt_subscription_tier_id: tier.tierId, grm_assignment_method: 'manual', grm_subscription_status: 'active' });
      const changes = await changeRows(t, u.userId);
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatchObject({ cht_change_reason: 'manual', cht_old_value: null, cht_new_value: String(tier.tierId), cht_changed_by_usr_user_id: staffId, cht_entity_id: tier.tierId });
      const page = await staff.get(add.headers.location as string);
      const row = new RegExp(`<tr data-email="${u.email}">[\\s\\S]*?</tr>`).exec(page.body)![0];
      expect(row).toContain('<td class="assigned" data-label="Assigned">2026-03-02 09:30:00</td>');
      expect(row).toContain('<td class="method" data-label="How">Manual</td>');
      expect(row).toContain('<td class="status" data-label="Subscription">active</td>');
      expect(page.body).toContain('Member added.');
    });

    it('adding a member of another tier moves them; removing takes them out of every tier; both are manual changes', async () => {
      const a = await createTier(t, { name: 'alpha', level: 30 });
      const b = await createTier(t, { name: 'beta', level: 10 });
      const u = await t.createUser();
      await t.services.tiers.membership.assignManually(u.userId, a.tierId, null);
      const add = await staff.postForm(`/admin/tiers/${b.tierId}/members`, { form_token: await token(t, staff, 'tier-members'), user_id: String(u.userId) });
      expect(add.statusCode).toBe(303);
      expect((await tierMemberships(t, u.userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([b.tierId]);
      const remove = await staff.postForm(`/admin/tiers/${b.tierId}/members/${u.userId}/remove`, { form_token: await token(t, staff, 'tier-members') });
      expect(remove.statusCode).toBe(303);
      expect(remove.headers.location).toBe(`/admin/tiers/${b.tierId}/members`);
      expect(await tierMemberships(t, u.userId)).toEqual([]);
      const changes = (await changeRows(t, u.userId)).map((c) => [c.cht_change_reason, c.cht_old_value, c.cht_new_value, c.cht_changed_by_usr_user_id]);
      expect(changes).toEqual([
        ['manual', null, String(a.tierId), null],
        ['manual', String(a.tierId), String(b.tierId), staffId],
        ['manual', String(b.tierId), null, staffId],
      ]);
      expect((await staff.get(`/admin/tiers/${b.tierId}/members`)).body).toContain('id="no-members"');
    });

    it('refuses to remove a user who is not in this tier, leaving their own tier alone', async () => {
      const mine = await createTier(t, { name: 'mine', level: 10 });
      const other = await createTier(t, { name: 'other', level: 20 });
      const u = await t.createUser();
      await t.services.tiers.membership.assignManually(u.userId, mine.tierId, null);
      const res = await staff.postForm(`/admin/tiers/${other.tierId}/members/${u.userId}/remove`, { form_token: await token(t, staff, 'tier-members') });
      expect(res.statusCode).toBe(400);
      expect(fieldError(res.body, 'members')).toBe('That user is not a member of this tier.');
      expect((await tierMemberships(t, u.userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([mine.tierId]);
      expect(await changeRows(t, u.userId)).toHaveLength(1);
    });

    it('refuses to add to an inactive tier or an unknown user, with the message next to the search field', async () => {
      const dormant = await createTier(t, { name: 'dormant', level: 10, active: false });
      const u = await t.createUser();
      const inactive = await staff.postForm(`/admin/tiers/${dormant.tierId}/members`, { form_token: await token(t, staff, 'tier-members'), user_id: String(u.userId), q: 'x' });
      expect(inactive.statusCode).toBe(400);
      expect(fieldError(inactive.body, 'q')).toBe('This tier is inactive: activate it before adding members.');
      expect(await tierMemberships(t, u.userId)).toEqual([]);
      expect(await changeRows(t, u.userId)).toEqual([]);
      const live = await createTier(t, { name: 'livetier', level: 10 });
      const ghost = await staff.postForm(`/admin/tiers/${live.tierId}/members`, { form_token: await token(t, staff, 'tier-members'), user_id: '987654' });
      expect(ghost.statusCode).toBe(400);
      expect(fieldError(ghost.body, 'q')).toBe('That user does not exist.');
      const none = await staff.postForm(`/admin/tiers/${live.tierId}/members`, { form_token: await token(t, staff, 'tier-members') });
      expect(none.statusCode).toBe(400);
      expect(fieldError(none.body, 'q')).toBe('Choose a user from the search results.');
    });

    it('treats the search text literally (LIKE wildcards do not match everything)', async () => {
      const tier = await createTier(t, { name: 'literal', level: 1 });
      const res = await staff.get(`/admin/tiers/${tier.tierId}/members?q=${encodeURIComponent('%')}`);
      expect(res.body).toContain('No user’s email contains “%”.');
    });
  });

  describe('products', () => {
    it('links a product to a tier with the tier chooser, and unlinks it', async () => {
      const tier = await createTier(t, { name: 'premium', displayName: 'Premium', level: 20 });
      await createTier(t, { name: 'sleepy', displayName: 'Sleepy', level: 5, active: false });
      const productId = await createProduct(t, 'Premium yearly');
      const form = await staff.get(`/admin/products/${productId}`);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('<select id="pro_sbt_subscription_tier_id" name="pro_sbt_subscription_tier_id"><option value="" selected>No tier</option>');
      expect(form.body).toContain(`<option value="${tier.tierId}" >Premium (premium, level 20)</option>`);
      expect(form.body).toContain('Sleepy (sleepy, level 5) — inactive');
      const save = await postPairs(t, staff, `/admin/products/${productId}`, [
        ['form_token', await token(t, staff, 'product-edit')],
        ['pro_name', 'Premium yearly'],
        ['pro_short_description', 'A year of Premium'],
        ['pro_is_active', 'false'],
        ['pro_is_active', 'true'],
        ['pro_sbt_subscription_tier_id', String(tier.tierId)],
      ]);
      expect(save.statusCode).toBe(303);
      expect(save.headers.location).toBe(`/admin/products/${productId}`);
      const staffKey = (await t.staffHeaders()).headers;
      const after = await t.request({ method: 'GET', url: `/api/v1/Product/${productId}`, headers: staffKey });
      expect(after.json.data).toMatchObject({ pro_name: 'Premium yearly', pro_short_description: 'A year of Premium', pro_is_active: true, pro_sbt_subscription_tier_id: tier.tierId });
      const list = await staff.get('/admin/products');
      expect(new RegExp(`<tr data-product="${productId}">[\\s\\S]*?</tr>`).exec(list.body)![0]).toContain('<td class="tier" data-label="Tier">Premium</td>');
      // The link is what the one grant path reads.
      const buyer = await t.createUser();
      expect(await t.services.tiers.membership.grantTierFromPurchase(buyer.userId, productId, 'card_processor', null)).toEqual({ outcome: 'joined', tierId: tier.tierId });

      const unlink = await postPairs(t, staff, `/admin/products/${productId}`, [
        ['form_token', await token(t, staff, 'product-edit')],
        ['pro_name', 'Premium yearly'],
        ['pro_short_description', ''],
        ['pro_is_active', 'false'],
        ['pro_sbt_subscription_tier_id', ''],
      ]);
      expect(unlink.statusCode).toBe(303);
      const unlinked = await t.request({ method: 'GET', url: `/api/v1/Product/${productId}`, headers: staffKey });
      expect(unlinked.json.data).toMatchObject({ pro_is_active: false, pro_sbt_subscription_tier_id: null, pro_short_description: null });
    });

    it('refuses an unknown or deleted tier and an empty name next to their fields, saving nothing', async () => {
      const productId = await createProduct(t, 'Basic monthly');
      const gone = await createTier(t, { name: 'gone', level: 1 });
      await t.services.db.updateTable('sbt_subscription_tiers').set({ sbt_delete_time: t.clock.now() }).where('sbt_subscription_tier_id', '=', gone.tierId).execute();
      for (const bad of [String(gone.tierId), '999999', 'abc']) {
        const res = await staff.postForm(`/admin/products/${productId}`, { form_token: await token(t, staff, 'product-edit'), pro_name: '', pro_is_active: 'false', pro_sbt_subscription_tier_id: bad });
        expect(res.statusCode, bad).toBe(400);
        expect(fieldError(res.body, 'pro_name'), bad).toBe('A value is required.');
        expect(fieldError(res.body, 'pro_sbt_subscription_tier_id'), bad).toBe(bad === 'abc' ? 'Expected an integer.' : 'Choose one of the listed tiers.');
      }
      const row = await t.request({ method: 'GET', url: `/api/v1/Product/${productId}`, headers: (await t.staffHeaders()).headers });
      expect(row.json.data).toMatchObject({ pro_name: 'Basic monthly', pro_sbt_subscription_tier_id: null });
      // A product still linked to a tier deleted since shows that link, so a save cannot drop it unnoticed.
      await (t.services.db as any).updateTable('pro_products').set({ pro_sbt_subscription_tier_id: gone.tierId }).where('pro_product_id', '=', productId).execute();
      const form = await staff.get(`/admin/products/${productId}`);
      expect(form.body).toContain(`<option value="${gone.tierId}" selected>Deleted or unknown tier #${gone.tierId}: choose another</option>`);
      expect(form.body).not.toContain('<option value="" selected>No tier</option>');
    });

    it('shows and saves the provider product references the Product model declares', async () => {
      const declared = PROVIDER_COLUMNS.filter((c) => Product.columns[c] !== undefined);
      expect(productFields().map((f) => f.column).filter((c) => PROVIDER_COLUMNS.includes(c))).toEqual(declared);
      const productId = await createProduct(t, 'Referenced');
      const form = await staff.get(`/admin/products/${productId}`);
      for (const c of PROVIDER_COLUMNS) expect(form.body.includes(`id="${c}"`), c).toBe(declared.includes(c));
      expect(form.body.includes('Provider product references')).toBe(declared.length > 0);
      const refs = Object.fromEntries(declared.map((c, i) => [c, `ref_${i}_${c}`]));
      const res = await staff.postForm(`/admin/products/${productId}`, { form_token: await token(t, staff, 'product-edit'), pro_name: 'Referenced', pro_is_active: 'false', pro_sbt_subscription_tier_id: '', ...refs });
      expect(res.statusCode).toBe(303);
      const row = await t.request({ method: 'GET', url: `/api/v1/Product/${productId}`, headers: (await t.staffHeaders()).headers });
      expect(row.json.data).toMatchObject(refs);
    });
  });

  it('subscription settings: a checked box (hidden false, then true) saves true, an unchecked one false', async () => {
    const post = (pairs: Array<[string, string]>) => postPairs(t, staff, '/admin/settings/subscriptions', pairs);
    const off = await post([
      ['form_token', await token(t, staff, 'subscription-settings')],
      ['subscription_reactivation_enabled', 'false'],
      ['tier_gate_hide_from_listings', 'false'],
    ]);
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe('/admin/settings/subscriptions');
    expect(t.services.settings.bool('subscription_reactivation_enabled')).toBe(false);
    const on = await post([
      ['form_token', await token(t, staff, 'subscription-settings')],
      ['subscription_reactivation_enabled', 'false'],
      ['subscription_reactivation_enabled', 'true'],
      ['tier_gate_hide_from_listings', 'false'],
      ['tier_gate_hide_from_listings', 'true'],
    ]);
    expect(on.statusCode).toBe(303);
    expect(t.services.settings.bool('subscription_reactivation_enabled')).toBe(true);
    expect(t.services.settings.bool('tier_gate_hide_from_listings')).toBe(true);
    expect((await staff.get('/admin/settings/subscriptions')).body).toMatch(/<input id="tier_gate_hide_from_listings" name="tier_gate_hide_from_listings" type="checkbox" value="true" checked>/);
    await post([['form_token', await token(t, staff, 'subscription-settings')], ['tier_gate_hide_from_listings', 'false']]);
    expect(t.services.settings.bool('tier_gate_hide_from_listings')).toBe(false);
  });
});

describe('admin tier screen with plugin-declared string and bounded features', () => {
  let t: TestApp;
  let staff: WebClient;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-screens-'));
    mkdirSync(path.join(dir, 'zeta'));
    writeFileSync(
      path.join(dir, 'zeta', 'tier_features.json'),
      JSON.stringify({
        greeting: { type: 'string', label: 'Greeting', description: 'Shown on the dashboard', default: 'Hello' },
        seats: { type: 'integer', label: 'Seats', description: 'Team seats', default: 1, min: 1, max: 5 },
      }),
    );
    t = await createTestApp({ pluginsDir: dir });
    const s = await t.createUser({ permission: 5 });
    staff = await signIn(t, s.email, s.password);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every plugin’s features prefixed, with a text input for strings, and saves them typed', async () => {
    const form = await staff.get('/admin/tiers/new');
    // The plugin is not active: its features are folded away, still posted with the form.
    expect(form.body).toContain('<details class="features" data-source="zeta" data-inactive ><summary>Plugin: zeta (inactive, 2 features)</summary>');
    expect(form.body).toContain('<input id="feature_zeta_greeting" name="feature_zeta_greeting" type="text" placeholder="Hello" value="">');
    expect(form.body).toMatch(/<input id="feature_zeta_seats" name="feature_zeta_seats" type="number" step="1" min="1" max="5"/);
    expect(form.body).toContain('Fallback when the tier has no value: &quot;Hello&quot;.');
    const tooMany = await staff.postForm('/admin/tiers/new', {
      form_token: await token(t, staff, 'tier-edit'),
      sbt_name: 'team',
      sbt_display_name: 'Team',
      sbt_tier_level: '10',
      sbt_is_active: 'true',
      feature_zeta_seats: '6',
      feature_zeta_greeting: 'Hi team',
    });
    expect(tooMany.statusCode).toBe(400);
    expect(fieldError(tooMany.body, 'feature_zeta_seats')).toBe('Must be at most 5.');
    expect(tooMany.body).toContain('value="Hi team"');
    const ok = await staff.postForm('/admin/tiers/new', {
      form_token: await token(t, staff, 'tier-edit'),
      sbt_name: 'team',
      sbt_display_name: 'Team',
      sbt_tier_level: '10',
      sbt_is_active: 'true',
      feature_zeta_seats: '5',
      feature_zeta_greeting: 'Hi team',
    });
    expect(ok.statusCode).toBe(303);
    const id = Number(/\/admin\/tiers\/(\d+)/.exec(String(ok.headers.location))![1]);
    expect((await tierRow(t, id)).sbt_features).toMatchObject({ zeta_seats: 5, zeta_greeting: 'Hi team', drive_share_links: false });
  });
});
