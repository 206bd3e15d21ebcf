import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formToken } from '../../src/accounts/web-sessions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

const DAY = 86_400_000;

async function token(t: TestApp, c: WebClient, form: string): Promise<string> {
  return formToken((await t.services.webSessions.load(c.jar.cookies.get('gatehouse_session')))!, form);
}

/** The user ids of the member list's rows, in page order. */
const listedUsers = (body: string) => [...body.matchAll(/<tr data-user="(\d+)"/g)].map((m) => Number(m[1]));
/** The order ids of an orders table's rows, in page order. */
const listedOrders = (body: string) => [...body.matchAll(/<tr data-order="(\d+)" data-status/g)].map((m) => Number(m[1]));
const rowOf = (body: string, attr: string, value: string | number) => new RegExp(`<tr ${attr}="${value}"[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';
const total = (body: string, id: string) => Number(new RegExp(`id="${id}">\\((\\d+)\\)<`).exec(body)?.[1] ?? NaN);
const decode = (href: string) => href.replace(/&amp;/g, '&');

interface OrderSpec {
  status: 1 | 2 | 3 | 4;
  source?: 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store' | null;
  total: number;
  currency?: string;
  at: Date;
  paymentIntent?: string;
  session?: string;
  paypal?: string;
  error?: string;
  refund?: { amount: number; note: string; at: Date };
  product?: number;
}

/** An order as checkout and the webhooks leave it, with one item. */
async function insertOrder(t: TestApp, userId: number | null, o: OrderSpec): Promise<number> {
  const db = t.services.db as any;
  const order = await db
    .insertInto('ord_orders')
    .values({
      ord_usr_user_id: userId,
      ord_timestamp: o.at,
      ord_total_cost: o.total,
      ord_currency: o.currency ?? 'usd',
      ord_status: o.status,
      ord_payment_source: o.source === undefined ? 'card_processor' : o.source,
      ord_payment_method: o.source ?? null,
      ord_stripe_payment_intent_id: o.paymentIntent ?? null,
      ord_stripe_session_id: o.session ?? null,
      ord_paypal_order_id: o.paypal ?? null,
      ord_error: o.error ?? null,
      ord_refund_amount: o.refund?.amount ?? null,
      ord_refund_time: o.refund?.at ?? null,
      ord_refund_note: o.refund?.note ?? null,
      ord_create_time: o.at,
      ord_update_time: o.at,
    })
    .returning('ord_order_id')
    .executeTakeFirstOrThrow();
  if (o.product !== undefined) {
    await db
      .insertInto('odi_order_items')
      .values({
        odi_ord_order_id: order.ord_order_id,
        odi_pro_product_id: o.product,
        odi_usr_user_id: userId,
        odi_price: o.total,
        odi_currency: o.currency ?? 'usd',
        odi_is_subscription: false,
        odi_refund_amount: o.refund?.amount ?? null,
        odi_refund_time: o.refund?.at ?? null,
        odi_refund_note: o.refund?.note ?? null,
        odi_create_time: o.at,
        odi_update_time: o.at,
      })
      .execute();
  }
  return Number(order.ord_order_id);
}

describe('admin members and orders (/admin/members, /admin/members/{id}, /admin/orders)', () => {
  let t: TestApp;
  let staff: WebClient;
  let staffId: number;
  let superadmin: WebClient;
  let superId: number;
  let memberClient: WebClient;
  let gold: TestTier;
  let silver: TestTier;
  const u: Record<string, { userId: number; email: string }> = {};
  const orders: Record<string, number> = {};

  beforeAll(async () => {
    t = await createTestApp();
    const now = t.clock.now();
    const at = (days: number) => new Date(now.getTime() + days * DAY);
    gold = await createTier(t, { name: 'am_gold', displayName: 'Gold', level: 20 });
    silver = await createTier(t, { name: 'am_silver', displayName: 'Silver', level: 10 });
    const goldPlan = await subscriptionProduct(t, { name: 'Gold monthly', tierId: gold.tierId });
    const silverPlan = await subscriptionProduct(t, { name: 'Silver monthly', tierId: silver.tierId });
    const book = await subscriptionProduct(t, { name: 'A book', tierId: null, period: null });

    const s = await t.createUser({ permission: 5, email: 'staff.person@admin.example', firstName: 'Staff', lastName: 'Person' });
    staffId = s.userId;
    staff = await signIn(t, s.email, s.password);
    const boss = await t.createUser({ permission: 10, email: 'boss@admin.example', firstName: 'Boss' });
    superId = boss.userId;
    superadmin = await signIn(t, boss.email, boss.password);
    const plain = await t.createUser({ email: 'just.a.member@example.net', firstName: 'Plain' });
    memberClient = await signIn(t, plain.email, plain.password);
    u.plain = plain;

    const make = async (key: string, email: string, firstName: string, lastName?: string) => {
      t.clock.advance(1000);
      u[key] = await t.createUser({ email, firstName, ...(lastName ? { lastName } : {}) });
    };
    await make('ada', 'ada.lovelace@analytical.example', 'Ada', 'Lovelace');
    await make('grace', 'grace@navy.example', 'Grace', 'Hopper');
    await make('ios', 'apple.fan@example.org', 'Tim', 'Fruit');
    await make('wallet', 'wallet.user@example.org', 'Wally', 'Paypal');
    await make('paused', 'droid@example.org', 'Andy', 'Droid');
    await make('ended', 'lapsed@example.org', 'Lapsed', 'Reader');
    await make('underscore', 'x_y@wild.example', 'Under', 'Score');
    await make('plainx', 'xay@wild.example', 'Plain', 'Letters');
    await make('percent', 'percent@wild.example', '50% Off', 'Deal');
    await make('backslash', 'back@wild.example', 'Back\\slash', 'Name');

    // Ada: a tier given by staff, and three orders: paid, failed, pending.
    await t.services.tiers.membership.assignManually(u.ada!.userId, gold.tierId, staffId);
    orders.adaPaid = await insertOrder(t, u.ada!.userId, { status: 2, total: 1500, at: at(-3), paymentIntent: 'pi_ada_paid', product: book });
    orders.adaFailed = await insertOrder(t, u.ada!.userId, { status: 3, total: 1500, at: at(-2), paymentIntent: 'pi_ada_failed_42', error: 'Your card was declined', product: book });
    orders.adaPending = await insertOrder(t, u.ada!.userId, { status: 1, total: 900, at: at(-1), session: 'cs_ada_pending', product: book });
    orders.adaRefunded = await insertOrder(t, u.ada!.userId, { status: 4, total: 2000, at: at(-4), paymentIntent: 'pi_ada_refunded', refund: { amount: 2000, note: 'damaged copy', at: at(-3.5) }, product: book });
    orders.walletOrder = await insertOrder(t, u.wallet!.userId, { status: 2, source: 'wallet_provider', total: 1000, at: at(-5), paypal: 'PAYPAL-ORDER-7', product: book });
    orders.guest = await insertOrder(t, null, { status: 3, total: 500, at: at(-6), paymentIntent: 'pi_guest_failed', error: 'Card expired', product: book });

    const period = { periodStart: at(-10), periodEnd: at(20) };
    const graceItem = await insertSubscription(t, u.grace!.userId, silverPlan, { source: 'card_processor', price: 1000, ...period, extra: { odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(5), odi_subscription_reference: 'sub_grace' } });
    await t.services.tiers.membership.grantTierFromPurchase(u.grace!.userId, silverPlan, 'card_processor', { type: 'order_item', id: graceItem });
    const iosItem = await insertSubscription(t, u.ios!.userId, goldPlan, { source: 'ios_store', price: 999, ...period, extra: { odi_subscription_reference: 'apple-tx-1' } });
    await t.services.tiers.membership.grantTierFromPurchase(u.ios!.userId, goldPlan, 'ios_store', { type: 'order_item', id: iosItem });
    await insertSubscription(t, u.wallet!.userId, silverPlan, { source: 'wallet_provider', price: 1000, status: 'cancelled', ...period });
    await insertSubscription(t, u.paused!.userId, silverPlan, { source: 'android_store', price: 1000, ...period, extra: { odi_subscription_status: 'paused' } });
    await insertSubscription(t, u.ended!.userId, silverPlan, { source: 'card_processor', price: 1000, status: 'expired', ...period });

    // API keys: a machine key and an app session for Ada.
    await t.createMachineKey({ userId: u.ada!.userId });
    await (t.services.db as any)
      .insertInto('apk_api_keys')
      .values({ apk_usr_user_id: u.ada!.userId, apk_name: 'Ada’s phone', apk_public_key: 'pk_session_ada', apk_secret_hash: 'not-a-real-hash', apk_type: 'session', apk_permission: 1 })
      .execute();
  });
  afterAll(async () => t.close());

  describe('who may see the pages', () => {
    it('redirects anonymous visitors to sign-in and refuses members (403)', async () => {
      const anon = webClient(t);
      for (const path of ['/admin/members', '/admin/orders', `/admin/members/${u.ada!.userId}`]) {
        const res = await anon.get(path);
        expect(res.statusCode, path).toBe(303);
        expect(res.headers.location, path).toBe(`/login?next=${encodeURIComponent(path)}`);
        expect((await memberClient.get(path)).statusCode, path).toBe(403);
      }
      const post = await memberClient.postForm(`/admin/members/${u.ada!.userId}/tier`, { form_token: 'x', tier_id: String(silver.tierId) });
      expect(post.statusCode).toBe(403);
    });

    it('the admin navigation links the two lists; the import and export routes still answer', async () => {
      const res = await staff.get('/admin/members');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<a href="/admin/members">Members</a><a href="/admin/orders">Orders</a>');
      expect((await staff.get('/admin/members/import')).statusCode).toBe(200);
      const csv = await staff.get('/admin/members/export.csv');
      expect(csv.statusCode).toBe(200);
      expect(csv.body).toContain('ada.lovelace@analytical.example');
    });
  });

  describe('members list: search', () => {
    it('finds a member by part of their email, case-insensitively', async () => {
      const res = await staff.get('/admin/members?q=LOVELACE%40ANALYT');
      expect(res.statusCode).toBe(200);
      expect(listedUsers(res.body)).toEqual([u.ada!.userId]);
      expect(total(res.body, 'member-total')).toBe(1);
      expect(rowOf(res.body, 'data-user', u.ada!.userId)).toContain(`<a href="/admin/members/${u.ada!.userId}">ada.lovelace@analytical.example</a>`);
      expect(rowOf(res.body, 'data-user', u.ada!.userId)).toContain('<td class="tier" data-label="Tier">Gold <span class="help">(manual)</span></td>');
      expect(res.body).toContain('<input id="q" name="q" type="text" value="LOVELACE@ANALYT"');
    });

    it('finds a member by part of their name, also across first and last name', async () => {
      expect(listedUsers((await staff.get('/admin/members?q=hopp')).body)).toEqual([u.grace!.userId]);
      expect(listedUsers((await staff.get('/admin/members?q=' + encodeURIComponent('grace h'))).body)).toEqual([u.grace!.userId]);
      expect(listedUsers((await staff.get('/admin/members?q=nobody-like-this')).body)).toEqual([]);
      expect((await staff.get('/admin/members?q=nobody-like-this')).body).toContain('<p id="no-members">No member matches.</p>');
    });

    it('treats %, _ and \\ in the search as plain characters', async () => {
      expect(listedUsers((await staff.get('/admin/members?q=x_y')).body)).toEqual([u.underscore!.userId]);
      expect(listedUsers((await staff.get('/admin/members?q=' + encodeURIComponent('%'))).body)).toEqual([u.percent!.userId]);
      expect(listedUsers((await staff.get('/admin/members?q=' + encodeURIComponent('k\\s'))).body)).toEqual([u.backslash!.userId]);
      expect(listedUsers((await staff.get('/admin/members?q=' + encodeURIComponent('_@wild'))).body)).toEqual([]);
    });
  });

  describe('members list: filters', () => {
    it('by tier, and by no tier', async () => {
      const goldRes = await staff.get(`/admin/members?tier=${gold.tierId}`);
      expect(listedUsers(goldRes.body).sort()).toEqual([u.ada!.userId, u.ios!.userId].sort());
      expect(goldRes.body).toContain(`<option value="${gold.tierId}" selected>Gold</option>`);
      const none = listedUsers((await staff.get('/admin/members?tier=none')).body);
      expect(none).toContain(u.wallet!.userId);
      expect(none).not.toContain(u.ada!.userId);
      expect(none).not.toContain(u.grace!.userId);
    });

    it('by billing source: each of the four, and manual', async () => {
      const by = async (qs: string) => listedUsers((await staff.get(`/admin/members?${qs}`)).body).sort();
      expect(await by('source=card_processor')).toEqual([u.grace!.userId]);
      expect(await by('source=ios_store')).toEqual([u.ios!.userId]);
      expect(await by('source=wallet_provider')).toEqual([u.wallet!.userId]);
      expect(await by('source=android_store')).toEqual([u.paused!.userId]);
      expect(await by('source=manual')).toEqual([u.ada!.userId]);
    });

    it('by billing status, from the subscriptions’ states', async () => {
      const by = async (qs: string) => listedUsers((await staff.get(`/admin/members?${qs}`)).body).sort();
      expect(await by('status=active')).toEqual([u.ios!.userId]);
      expect(await by('status=billing_issue')).toEqual([u.grace!.userId]);
      expect(await by('status=paused')).toEqual([u.paused!.userId]);
      expect(await by('status=ending')).toEqual([u.wallet!.userId]);
      expect(await by('status=ended')).toEqual([u.ended!.userId]);
      const none = await by('status=none');
      expect(none).toContain(u.ada!.userId);
      expect(none).not.toContain(u.grace!.userId);
      const row = rowOf((await staff.get('/admin/members?status=billing_issue')).body, 'data-user', u.grace!.userId);
      expect(row).toContain('<span data-status="in_grace">Card · billing issue (grace)</span>');
    });

    it('filters combine, and each link keeps them', async () => {
      const by = async (qs: string) => listedUsers((await staff.get(`/admin/members?${qs}`)).body);
      expect(await by(`tier=${silver.tierId}&status=billing_issue&source=card_processor`)).toEqual([u.grace!.userId]);
      expect(await by(`tier=${gold.tierId}&status=billing_issue`)).toEqual([]);
      expect(await by('source=card_processor&status=ended')).toEqual([u.ended!.userId]);
      expect(await by('source=ios_store&status=ending')).toEqual([]);
      expect(await by('q=example.org&status=ending')).toEqual([u.wallet!.userId]);
      const res = await staff.get(`/admin/members?q=wild&tier=none`);
      expect(listedUsers(res.body)).toHaveLength(4);
      expect(res.body).toContain('<option value="none" selected>No tier</option>');
    });

    it('a bad value is named next to its field with a 400, and nothing is listed; unknown parameters are ignored', async () => {
      const cases: Array<[string, string, string]> = [
        ['tier=gold', 'tier', 'There is no such tier.'],
        ['tier=999999', 'tier', 'There is no such tier.'],
        ['source=cash', 'source', 'Expected one of card_processor, wallet_provider, ios_store, android_store, manual.'],
        ['status=late', 'status', 'Expected one of active, billing_issue, paused, ending, ended, none.'],
        ['page=0', 'page', 'The page is a whole number from 1 to 100000.'],
        ['page=two', 'page', 'The page is a whole number from 1 to 100000.'],
        ['q=a&q=b', 'q', 'Give this only once.'],
        [`q=${'x'.repeat(101)}`, 'q', 'Search with at most 100 characters.'],
        ['q=a%01b', 'q', 'The search cannot contain control characters.'],
        ['page=99999999999', 'page', 'The page is a whole number from 1 to 100000.'],
      ];
      for (const [qs, field, message] of cases) {
        const res = await staff.get(`/admin/members?${qs}`);
        expect(res.statusCode, qs).toBe(400);
        expect(res.body, qs).toContain(`id="${field}-error" role="alert">${message}</`);
        expect(res.body, qs).toContain('id="filter-error"');
        expect(listedUsers(res.body), qs).toEqual([]);
      }
      expect((await staff.get('/admin/members?colour=blue')).statusCode).toBe(200);
      // A NUL is refused by the front controller for every route (a 400 page).
      expect((await staff.get('/admin/members?q=a%00b')).statusCode).toBe(400);
      // Every parameter with awkward text: a page or a refusal, never a server error.
      const awkward = ["' OR 1=1 --", '%', '_', '\\', '\uD800', '\uFFFF', '𝕏'.repeat(40), '1e309', '-0', 'NaN', '9007199254740993', '<script>', '__proto__', ' ', ''];
      for (const param of ['q', 'tier', 'source', 'status', 'page']) {
        for (const value of awkward) {
          const qs = `${param}=${[...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`;
          expect([200, 400], `members ${qs}`).toContain((await staff.get(`/admin/members?${qs}`)).statusCode);
          if (param !== 'q' && param !== 'tier') expect([200, 400], `orders ${qs}`).toContain((await staff.get(`/admin/orders?${qs}`)).statusCode);
        }
      }
      // Odd encodings are searched as text, never a server error.
      for (const qs of ['q=%ZZ', 'q=%E2%82', 'q[]=a', 'tier=%00', 'source=%00', 'q=' + encodeURIComponent('\\'), 'q=' + encodeURIComponent("' or 1=1 --")]) {
        expect([200, 400], qs).toContain((await staff.get(`/admin/members?${qs}`)).statusCode);
        expect([200, 400], qs).toContain((await staff.get(`/admin/orders?${qs.replace(/^q/, 'status')}`)).statusCode);
      }
    });
  });

  describe('members list: paging', () => {
    it('25 a page in a stable order (newest first), with the total, and page links that keep the filters', async () => {
      const made: number[] = [];
      for (let i = 0; i < 30; i++) {
        t.clock.advance(1000);
        made.push((await t.createUser({ email: `bulk-${String(i).padStart(2, '0')}@pages.example`, firstName: 'Bulk' })).userId);
      }
      const first = await staff.get('/admin/members?q=pages.example&tier=none');
      expect(first.statusCode).toBe(200);
      expect(total(first.body, 'member-total')).toBe(30);
      expect(listedUsers(first.body)).toEqual(made.slice().reverse().slice(0, 25));
      expect(first.body).toContain('Members 1–25 of 30 · page 1 of 2');
      const next = /id="next-page" rel="next" href="([^"]+)"/.exec(first.body)![1]!;
      expect(decode(next)).toBe('/admin/members?q=pages.example&tier=none&page=2');
      expect(first.body).not.toContain('id="prev-page"');
      const second = await staff.get(decode(next));
      expect(listedUsers(second.body)).toEqual(made.slice().reverse().slice(25));
      expect(second.body).toContain('Members 26–30 of 30 · page 2 of 2');
      expect(decode(/id="prev-page" rel="prev" href="([^"]+)"/.exec(second.body)![1]!)).toBe('/admin/members?q=pages.example&tier=none');
      // Past the end: an empty page, not an error.
      const past = await staff.get('/admin/members?q=pages.example&page=9');
      expect(past.statusCode).toBe(200);
      expect(listedUsers(past.body)).toEqual([]);
      expect(past.body).toContain('id="first-page"');
      expect(past.body).toContain('<span id="range">Page 9 is past the last page (2) of 30 members</span>');
    });
  });

  describe('member page', () => {
    it('shows the profile, the tier and how it was assigned, orders (a failed one with its reference), refunds, tier history and keys without secrets', async () => {
      const res = await staff.get(`/admin/members/${u.ada!.userId}`);
      expect(res.statusCode).toBe(200);
      const body = res.body;
      expect(body).toContain('<td class="name">Ada Lovelace</td>');
      expect(body).toContain('<td class="permission">member (0)</td>');
      expect(body).toMatch(/<td class="created">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/td>/);
      expect(body).toContain('<strong id="member-tier">Gold</strong>');
      expect(body).toMatch(/<p id="tier-how">Gold: assigned by <strong class="method">manual<\/strong> on \d{4}-/);
      // Orders: newest first, every state, with the provider's reference.
      expect(listedOrders(body)).toEqual([orders.adaPending, orders.adaFailed, orders.adaPaid, orders.adaRefunded]);
      const failed = rowOf(body, 'data-order', orders.adaFailed!);
      expect(failed).toContain('data-status="failed"');
      expect(failed).toContain('<td class="status" data-label="Status">Failed<br><span class="help error-text">Your card was declined</span></td>');
      expect(failed).toContain('<code class="ident">pi_ada_failed_42</code> <span class="help">payment</span>');
      expect(failed).toContain('<td class="amount" data-label="Amount">$15.00 <span class="help">USD</span></td>');
      expect(rowOf(body, 'data-order', orders.adaPending!)).toContain('<code class="ident">cs_ada_pending</code> <span class="help">checkout session</span>');
      expect(rowOf(body, 'data-order', orders.adaPending!)).toContain('>Pending</td>');
      // Refunds.
      expect(body).toContain('<h2>Refunds (1)</h2>');
      expect(rowOf(body.slice(body.indexOf('id="refunds"')), 'data-order', orders.adaRefunded!)).toContain('<td class="amount" data-label="Amount">$20.00</td>');
      expect(body).toContain('damaged copy');
      // Tier history from change tracking: the manual assignment, by the staff member.
      const history = body.slice(body.indexOf('id="tier-history"'));
      expect(history).toMatch(/<tr data-change="\d+" data-reason="manual">/);
      expect(history).toContain('<td class="change" data-label="Change">no tier → Gold</td>');
      expect(history).toContain(`<a href="/admin/members/${staffId}">staff.person@admin.example</a>`);
      // Keys and app sessions, no secret.
      const keys = body.slice(body.indexOf('id="keys"'));
      expect(keys).toMatch(/<tr data-key="\d+" data-type="machine">/);
      expect(keys).toMatch(/<tr data-key="\d+" data-type="session"><td style="overflow-wrap:anywhere">Ada’s phone<\/td>/);
      expect(body).not.toContain('not-a-real-hash');
      // A plain staff member is offered the tier actions, not login-as.
      expect(body).toContain(`<form method="post" action="/admin/members/${u.ada!.userId}/tier" id="assign-tier">`);
      expect(body).toContain(`action="/admin/members/${u.ada!.userId}/tier/remove" id="remove-tier"`);
      expect(body).not.toContain('/login-as');
    });

    it('shows a subscription with a billing issue, its source, and its tier bought through it', async () => {
      const body = (await staff.get(`/admin/members/${u.grace!.userId}`)).body;
      expect(body).toContain('id="billing-issue" role="alert"');
      expect(body).toContain('<td class="status" data-label="Status">in_grace</td>');
      expect(body).toContain('<td class="source" data-label="Billed through">Card</td>');
      expect(body).toContain('<td class="period-end" data-label="Renewal or end">renewal was due 2026-03-21 12:00:00</td>');
      expect(body).toMatch(/<p id="tier-how">Silver: assigned by <strong class="method">purchase<\/strong> through Card on /);
      expect(body).toMatch(/data-reason="purchase">[\s\S]*?no tier → Silver/);
    });

    it('assigns and removes a tier through the membership service, recorded as manual by the staff member', async () => {
      const add = await staff.postForm(`/admin/members/${u.plain!.userId}/tier`, { form_token: await token(t, staff, 'member-tier'), tier_id: String(silver.tierId) });
      expect(add.statusCode).toBe(303);
      expect(add.headers.location).toBe(`/admin/members/${u.plain!.userId}`);
      const page = await staff.get(`/admin/members/${u.plain!.userId}`);
      expect(page.body).toContain('id="member-notice"');
      expect(page.body).toContain('<strong id="member-tier">Silver</strong>');
      expect(page.body).toMatch(/data-reason="manual">[\s\S]*?no tier → Silver[\s\S]*?staff\.person@admin\.example/);
      const remove = await staff.postForm(`/admin/members/${u.plain!.userId}/tier/remove`, { form_token: await token(t, staff, 'member-tier') });
      expect(remove.statusCode).toBe(303);
      const after = await staff.get(`/admin/members/${u.plain!.userId}`);
      expect(after.body).toContain('<strong id="member-tier">none</strong>');
      expect(after.body).toContain('<td class="change" data-label="Change">Silver → no tier</td>');
      // Removing again: nothing to remove.
      const again = await staff.postForm(`/admin/members/${u.plain!.userId}/tier/remove`, { form_token: await token(t, staff, 'member-tier') });
      expect(again.statusCode).toBe(400);
      expect(again.body).toContain('id="tier_id-error" role="alert">This member is in no tier.<');
      const bad = await staff.postForm(`/admin/members/${u.plain!.userId}/tier`, { form_token: await token(t, staff, 'member-tier'), tier_id: '999999' });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('There is no such tier.');
      const noToken = await staff.postForm(`/admin/members/${u.plain!.userId}/tier`, { form_token: 'nope', tier_id: String(silver.tierId) });
      expect(noToken.statusCode).toBe(403);
      expect((await staff.get(`/admin/members/${u.plain!.userId}`)).body).toContain('<strong id="member-tier">none</strong>');
    });

    it('a staff member cannot act on a superadmin: no actions offered, the POST refused, nothing changes', async () => {
      const page = await staff.get(`/admin/members/${superId}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<td class="permission">superadmin (10)</td>');
      expect(page.body).toContain('<p class="help" id="no-actions">You cannot change a user with more permission than yours.</p>');
      expect(page.body).not.toContain('id="assign-tier"');
      const res = await staff.postForm(`/admin/members/${superId}/tier`, { form_token: await token(t, staff, 'member-tier'), tier_id: String(gold.tierId) });
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('You cannot change the tier of a user with more permission than yours.');
      expect((await staff.get(`/admin/members/${superId}`)).body).toContain('<strong id="member-tier">none</strong>');
    });

    it('offers login-as to superadmins only (not on their own page), and the button signs in as the member', async () => {
      const own = await superadmin.get(`/admin/members/${superId}`);
      expect(own.body).not.toContain('/login-as');
      const page = await superadmin.get(`/admin/members/${u.wallet!.userId}`);
      expect(page.body).toContain(`<form method="post" action="/admin/users/${u.wallet!.userId}/login-as" id="login-as"`);
      expect((await staff.get(`/admin/members/${u.wallet!.userId}`)).body).not.toContain('/login-as');
      const res = await superadmin.postForm(`/admin/users/${u.wallet!.userId}/login-as`, { form_token: superadmin.formToken(page.body, `/admin/users/${u.wallet!.userId}/login-as`) });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/');
      expect((await superadmin.get('/admin/members')).statusCode).toBe(403);
    });

    it('an unknown member is a 404', async () => {
      expect((await staff.get('/admin/members/999999')).statusCode).toBe(404);
      expect((await staff.get('/admin/members/abc')).statusCode).toBe(404);
    });
  });

  describe('orders list', () => {
    it('lists every order newest first, failed and pending included, with member, source and provider reference', async () => {
      const res = await staff.get('/admin/orders');
      expect(res.statusCode).toBe(200);
      // (The subscriptions' own orders are stamped by the database's clock, later than these.)
      const mine = [orders.adaPending, orders.adaFailed, orders.adaPaid, orders.adaRefunded, orders.walletOrder, orders.guest];
      expect(listedOrders(res.body).filter((id) => mine.includes(id))).toEqual(mine);
      expect(total(res.body, 'order-total')).toBe(11);
      const failed = rowOf(res.body, 'data-order', orders.adaFailed!);
      expect(failed).toContain(`<td class="member" data-label="Member" style="overflow-wrap:anywhere"><a href="/admin/members/${u.ada!.userId}">ada.lovelace@analytical.example</a></td>`);
      expect(failed).toContain('<td class="source" data-label="Source">Card</td>');
      expect(failed).toContain('pi_ada_failed_42');
      expect(rowOf(res.body, 'data-order', orders.walletOrder!)).toContain('<code class="ident">PAYPAL-ORDER-7</code> <span class="help">wallet order</span>');
      expect(rowOf(res.body, 'data-order', orders.guest!)).toContain('<td class="member" data-label="Member" style="overflow-wrap:anywhere">guest</td>');
    });

    it('filters by status and by source, and refuses a bad value with a 400', async () => {
      const failed = await staff.get('/admin/orders?status=failed');
      expect(listedOrders(failed.body)).toEqual([orders.adaFailed, orders.guest]);
      expect(total(failed.body, 'order-total')).toBe(2);
      expect(listedOrders((await staff.get('/admin/orders?status=pending')).body)).toEqual([orders.adaPending]);
      // An order recorded without a source counts by its item's: the wallet member's subscription order too.
      const wallet = (await staff.get('/admin/orders?source=wallet_provider')).body;
      expect(listedOrders(wallet)).toHaveLength(2);
      expect(listedOrders(wallet)).toContain(orders.walletOrder);
      expect([...wallet.matchAll(/<td class="source" data-label="Source">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(['Wallet (online payment account)', 'Wallet (online payment account)']);
      expect(listedOrders((await staff.get('/admin/orders?source=wallet_provider&status=failed')).body)).toEqual([]);
      for (const qs of ['status=lost', 'source=cash', 'page=-1']) {
        const res = await staff.get(`/admin/orders?${qs}`);
        expect(res.statusCode, qs).toBe(400);
        expect(res.body, qs).toContain('id="filter-error"');
      }
    });

    it('pages 25 at a time, keeping the filter', async () => {
      const start = t.clock.now().getTime();
      for (let i = 0; i < 26; i++) await insertOrder(t, u.ended!.userId, { status: 3, total: 100 + i, at: new Date(start + (i + 1) * 1000), paymentIntent: `pi_many_${i}` });
      const first = await staff.get('/admin/orders?status=failed');
      expect(total(first.body, 'order-total')).toBe(28);
      expect(listedOrders(first.body)).toHaveLength(25);
      const next = decode(/id="next-page" rel="next" href="([^"]+)"/.exec(first.body)![1]!);
      expect(next).toBe('/admin/orders?status=failed&page=2');
      const second = await staff.get(next);
      expect(listedOrders(second.body)).toHaveLength(3);
      expect(listedOrders(second.body).slice(-2)).toEqual([orders.adaFailed, orders.guest]);
      expect(new Set([...listedOrders(first.body), ...listedOrders(second.body)]).size).toBe(28);
    });
  });

  describe('dashboard figures link to the lists', () => {
    it('each figure’s link opens the list it counts', async () => {
      const body = (await staff.get('/admin')).body;
      const href = (id: string) => decode(new RegExp(`<a id="${id}" href="([^"]+)">`).exec(body)![1]!);
      const number = (id: string) => Number(new RegExp(`<a id="${id}" href="[^"]+">(\\d+)`).exec(body)![1]);
      expect(href('user-count')).toBe('/admin/members');
      expect(total((await staff.get(href('user-count'))).body, 'member-total')).toBe(number('user-count'));
      expect(href('users-without-tier')).toBe('/admin/members?tier=none');
      expect(total((await staff.get(href('users-without-tier'))).body, 'member-total')).toBe(number('users-without-tier'));
      expect(href('active-subscriptions')).toBe('/admin/members?status=active');
      expect(href('failed-orders')).toBe('/admin/orders?status=failed');
      expect(total((await staff.get(href('failed-orders'))).body, 'order-total')).toBe(number('failed-orders'));
      expect(total((await staff.get(href('order-count'))).body, 'order-total')).toBe(number('order-count'));
      expect(href('pending-orders')).toBe('/admin/orders?status=pending');
      expect(body).toContain(`<td class="count"><a href="/admin/members?tier=${gold.tierId}">2</a></td>`);
      expect(body).toContain('<td class="active"><a href="/admin/members?source=ios_store&amp;status=active">1</a></td>');
      expect(body).toContain('<td class="ending"><a href="/admin/members?source=wallet_provider&amp;status=ending">1</a></td>');
      expect(body).toMatch(/<tr data-user="(\d+)"><td class="email"><a href="\/admin\/members\/\1">bulk-29@pages\.example<\/a>/);
    });
  });
});
