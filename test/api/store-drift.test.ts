import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/browser-session.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { createProduct, itemFor, postWebhook, providerDay, setStoreActive, tierOf, uniqueRef } from '../helpers/store.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';

const stripe = new FakeStripe();
const at = providerDay;
const secs = (d: Date) => Math.floor(d.getTime() / 1000);
const ts = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
const DRIFT = '/api/v1/management/store/drift';

let t: TestApp;
let silver: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  await cardDriver.setup(t);
  await stripe.start();
  await t.services.settings.set('card_processor_api_key', 'sk_test_drift');
  await t.services.settings.set('card_processor_api_base', stripe.base);
});
afterAll(async () => {
  await stripe.stop();
  await t.close();
});

/** A card subscriber (day 0 to day 30) whose subscription the processor has since ended, the event lost. */
async function lostExpiry(): Promise<{ userId: number; email: string; password: string; itemId: number; ref: string }> {
  const user = await t.createUser();
  const providerProductId = uniqueRef('price_');
  const productId = await createProduct(t, { tierId: silver.tierId, refs: { pro_card_price_id: providerProductId } });
  const ref = uniqueRef('sub_');
  const sub = stripe.addSubscription(ref, providerProductId, secs(at(30)), { user_id: String(user.userId), product_id: String(productId) });
  const res = await postWebhook(t, 'card_processor', await cardDriver.purchase(t, { userId: user.userId, productId, providerProductId, ref, at: at(0), periodEnd: at(30) }));
  expect(res.statusCode, res.body).toBe(200);
  expect(await tierOf(t, user.userId)).toBe(silver.tierId);
  sub.status = 'canceled';
  const item = await itemFor(t, 'card_processor', ref);
  return { ...user, itemId: Number(item!.odi_order_item_id), ref };
}

describe('scheduled reconciliation and its drift report', () => {
  it('before the task ever ran, the drift endpoint says so', async () => {
    const admin = await t.keyHeaders({ userPermission: 10 });
    const res = await t.request({ method: 'GET', url: DRIFT, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ run_time: null, outcome: null, error: null, report: null, skipped: null });
  });

  it('task store_reconcile repairs the drift and keeps its report, shown by management store/drift (superadmin machine key only)', async () => {
    const m = await lostExpiry();
    t.clock.set(at(31));
    const [outcome] = await t.services.scheduler.runNow('store_reconcile');
    const entry = { order_item_id: m.itemId, source: 'card_processor', ours: { status: 'active', period_end: ts(at(30)) }, provider: { status: 'expired', state: 'canceled', period_end: ts(at(30)) }, action: 'expired' };
    expect(outcome).toEqual({ task: 'store_reconcile', result: { checked: expect.any(Number), drift: expect.arrayContaining([entry]), applied: expect.any(Number), unreachable: [], dry_run: false } });
    expect(await tierOf(t, m.userId)).toBeNull();
    expect(JSON.parse((await changeRows(t, m.userId)).at(-1)!.cht_metadata!)).toMatchObject({ how: 'reconcile', source: 'card_processor' });

    const admin = await t.keyHeaders({ userPermission: 10 });
    const res = await t.request({ method: 'GET', url: DRIFT, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ run_time: ts(at(31)), outcome: 'success', error: null, skipped: null, report: (outcome as { result: unknown }).result });

    const member = await t.keyHeaders({ userPermission: 0 });
    expect((await t.request({ method: 'GET', url: DRIFT, headers: member.headers })).statusCode).toBe(403);
    const staff = await t.keyHeaders({ userPermission: 5 });
    expect((await t.request({ method: 'GET', url: DRIFT, headers: staff.headers })).statusCode).toBe(403);
  });

  it('runs every store_reconcile_hours (0: off), and not while the store is inactive', async () => {
    // The run above was at day 31: the next is due a day later.
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    expect(await t.services.scheduler.runNow('store_reconcile')).toEqual([{ task: 'store_reconcile', skipped: 'not_due', next_due_time: ts(at(32)) }]);
    await t.services.settings.set('store_reconcile_hours', 0);
    t.clock.set(at(40));
    expect(await t.services.scheduler.runNow('store_reconcile')).toEqual([{ task: 'store_reconcile', skipped: 'not_due', next_due_time: null }]);
    await t.services.settings.set('store_reconcile_hours', 24);

    await setStoreActive(t, false);
    try {
      expect(await t.services.scheduler.runNow('store_reconcile')).toEqual([{ task: 'store_reconcile', result: { skipped: 'store_inactive' } }]);
    } finally {
      await setStoreActive(t, true);
    }
    const admin = await t.keyHeaders({ userPermission: 10 });
    const res = await t.request({ method: 'GET', url: DRIFT, headers: admin.headers });
    expect(res.json.data).toEqual({ run_time: ts(at(40)), outcome: 'success', error: null, skipped: 'store_inactive', report: null });
  });
});

describe('store_resync and the admin member page', () => {
  it('staff in a browser session resync one member: the drift is repaired and the answer reports it', async () => {
    const m = await lostExpiry();
    const other = await lostExpiry();
    t.clock.set(at(41));
    const staffUser = await t.createUser({ permission: 5 });
    const web = await signIn(t, staffUser.email, staffUser.password);

    // Reached from the tier's members screen.
    expect((await web.get(`/admin/tiers/${silver.tierId}/members`)).body).toContain(`<a href="/admin/members/${m.userId}">`);
    const page = await web.get(`/admin/members/${m.userId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="resync"');
    expect(page.body).toContain('Resync billing');
    expect(page.body).toContain(`data-order-item="${m.itemId}"`);

    const res = await web.api('POST', '/api/v1/action/store_resync', { payload: { user_id: m.userId } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toEqual({
      user_id: m.userId,
      checked: 1,
      drift: [{ order_item_id: m.itemId, source: 'card_processor', ours: { status: 'active', period_end: ts(at(30)) }, provider: { status: 'expired', state: 'canceled', period_end: ts(at(30)) }, action: 'expired' }],
      applied: 1,
      unreachable: [],
      dry_run: false,
    });
    expect(await tierOf(t, m.userId)).toBeNull();
    expect(await itemFor(t, 'card_processor', m.ref)).toMatchObject({ odi_subscription_status: 'expired' });
    // Only that member.
    expect(await tierOf(t, other.userId)).toBe(silver.tierId);
  });

  it('a member is refused, and so is a staff machine key (a browser session is required); nothing changes', async () => {
    const m = await lostExpiry();
    t.clock.set(at(41));
    const member = await t.createUser();
    const web = await signIn(t, member.email, member.password);
    const refused = await web.api('POST', '/api/v1/action/store_resync', { payload: { user_id: m.userId } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json.errortype).toBe('AuthenticationError');
    expect((await web.get(`/admin/members/${m.userId}`)).statusCode).toBe(403);

    const staffKey = await t.staffHeaders();
    const byKey = await t.request({ method: 'POST', url: '/api/v1/action/store_resync', headers: staffKey.headers, payload: { user_id: m.userId } });
    expect(byKey.statusCode).toBe(403);
    expect(await tierOf(t, m.userId)).toBe(silver.tierId);

    const staffUser = await t.createUser({ permission: 5 });
    const staff = await signIn(t, staffUser.email, staffUser.password);
    const unknown = await staff.api('POST', '/api/v1/action/store_resync', { payload: { user_id: 999999 } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json).toMatchObject({ errortype: 'ValidationError', validation_errors: { user_id: 'no such user' } });
  });

  it('the member page shows what the last scheduled run found for the member', async () => {
    const m = await lostExpiry();
    await t.services.db.deleteFrom('tsk_task_runs').where('tsk_name', '=', 'store_reconcile').execute();
    t.clock.set(at(45));
    await t.services.scheduler.runNow('store_reconcile');
    const staffUser = await t.createUser({ permission: 5 });
    const web = await signIn(t, staffUser.email, staffUser.password);
    const page = await web.get(`/admin/members/${m.userId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Last reconciliation with the providers: ${ts(at(45))}`);
    expect(page.body).toMatch(new RegExp(`<tr data-order-item="${m.itemId}"><td>${m.itemId}</td><td data-label="Ours">active [^<]*</td><td data-label="Provider">expired \\(canceled\\)[^<]*</td><td class="action" data-label="Done">expired</td>`));
    expect(page.body).toContain('<td class="status" data-label="Status">expired</td>');
    expect((await web.get('/admin/members/999999')).statusCode).toBe(404);
  });
});
