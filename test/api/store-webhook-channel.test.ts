import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { createProduct, postWebhook, setStoreActive, uniqueRef, webhookLogs } from '../helpers/store.js';
import { createTier, tierMemberships } from '../helpers/tiers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  await cardDriver.setup(t);
});
afterAll(async () => t.close());

describe('webhook channel limits and unresolvable events', () => {
  it('a purchase naming no known user is acknowledged, logged with the reason, and assigns nothing', async () => {
    const tier = await createTier(t, { name: 'gold', level: 30 });
    const productId = await createProduct(t, { tierId: tier.tierId });
    const f = { userId: 987654, productId, providerProductId: 'x', ref: uniqueRef('sub'), at: t.clock.now(), periodEnd: t.clock.now() };
    const res = await postWebhook(t, 'card_processor', await cardDriver.purchase(t, f));
    expect(res.statusCode).toBe(200);
    expect(res.json.data.outcomes).toEqual([{ outcome: 'unresolved', missing: 'user' }]);
    expect((await webhookLogs(t, 'card_processor')).at(-1)).toMatchObject({ wbh_processed: true, wbh_error_message: 'unresolved user', wbh_unresolved_reason: 'unknown_user', wbh_replay_time: null });
    expect(await t.services.db.selectFrom('odi_order_items').select('odi_order_item_id').execute()).toEqual([]);
    const real = (await t.createUser()).userId;
    expect(await tierMemberships(t, real)).toEqual([]);
  });

  it('is metered by the general per-IP bucket before verification (429 RateLimitError)', async () => {
    await t.services.settings.set('api_rate_limit_requests', 3);
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ method: 'POST', url: '/api/v1/webhooks/card_processor', remoteAddress: '203.0.113.9', headers: { 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode).toBe(400);
    }
    const limited = await t.request({ method: 'POST', url: '/api/v1/webhooks/card_processor', remoteAddress: '203.0.113.9', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json.errortype).toBe('RateLimitError');
    expect(limited.headers['retry-after']).toBeDefined();
    await t.services.settings.set('api_rate_limit_requests', 1000);
  });
});

describe('store_account_token action', () => {
  it('gives the signed-in user one stable UUID token, which store notifications map back to the user', async () => {
    const { headers, userId } = await t.keyHeaders();
    const first = await t.request({ method: 'POST', url: '/api/v1/action/store_account_token', headers });
    expect(first.statusCode, first.body).toBe(200);
    const token = first.json.data.app_account_token;
    expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = await t.request({ method: 'POST', url: '/api/v1/action/store_account_token', headers });
    expect(again.json.data.app_account_token).toBe(token);
    const { userForAccountToken } = await import('../../src/store/accounts.js');
    expect(await userForAccountToken(t.services.db, token.toUpperCase())).toBe(userId);
  });

  it('exists only while the store sells subscriptions', async () => {
    const { headers } = await t.keyHeaders();
    await t.services.settings.set('subscriptions_active', false);
    try {
      const res = await t.request({ method: 'POST', url: '/api/v1/action/store_account_token', headers });
      expect(res.statusCode).toBe(403);
      expect(res.json.errortype).toBe('ActionError');
      await t.services.settings.set('subscriptions_active', true);
      await t.services.settings.set('products_active', false);
      const closed = await t.request({ method: 'POST', url: '/api/v1/action/store_account_token', headers });
      expect(closed.statusCode).toBe(422);
    } finally {
      await setStoreActive(t, true);
    }
  });
});

describe('product provider references over CRUD', () => {
  it('staff write each source product reference and the price; members cannot', async () => {
    const staff = await t.staffHeaders();
    const form = 'pro_name=Gold&pro_link=gold-crud&pro_card_price_id=price_G&pro_wallet_plan_id=P-G&pro_ios_product_id=com.example.gold&pro_android_product_id=gold_monthly&pro_price=999&pro_currency=eur';
    const res = await t.request({ method: 'POST', url: '/api/v1/Product', headers: { ...staff.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toMatchObject({
      pro_card_price_id: 'price_G',
      pro_wallet_plan_id: 'P-G',
      pro_ios_product_id: 'com.example.gold',
      pro_android_product_id: 'gold_monthly',
      pro_price: 999,
      pro_currency: 'eur',
    });
    const member = await t.keyHeaders();
    const refused = await t.request({ method: 'POST', url: '/api/v1/Product', headers: { ...member.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: form.replace('gold-crud', 'gold-crud-2') });
    expect(refused.statusCode).toBe(403);
  });
});
