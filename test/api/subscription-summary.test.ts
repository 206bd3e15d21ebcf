import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAND_IN_SOURCE_SETTINGS } from '../helpers/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { insertSubscription, subscriptionProduct } from '../helpers/subscriptions.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

const ENTRY_KEYS = ['billing_issue', 'can_cancel', 'grace_until', 'name', 'order_item_id', 'period', 'price', 'renewal_or_end_date', 'scheduled_change', 'status'];
const start = new Date('2026-03-01T00:00:00Z');
const end = new Date('2026-04-01T00:00:00Z');

describe('subscription_summary', () => {
  let t: TestApp;
  let silver: TestTier;
  let gold: TestTier;
  let silverMonthly: number;
  let goldYearly: number;

  const summary = async (headers: Record<string, string>) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/action/subscription_summary', headers, payload: {} });
    expect(res.statusCode).toBe(200);
    return res.json.data;
  };

  async function subscriber(source: 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store', productId = silverMonthly) {
    const { headers, userId } = await t.keyHeaders();
    const id = await insertSubscription(t, userId, productId, { source, price: 999, periodStart: start, periodEnd: end });
    await t.services.tiers.membership.grantTierFromPurchase(userId, productId, source, { type: 'order_item', id });
    return { headers, userId, id };
  }

  beforeAll(async () => {
    t = await createTestApp({ settings: { products_active: true, subscriptions_active: true, ...STAND_IN_SOURCE_SETTINGS } });
    silver = await createTier(t, { name: 'silver', displayName: 'Silver', level: 10 });
    gold = await createTier(t, { name: 'gold', displayName: 'Gold', level: 20 });
    silverMonthly = await subscriptionProduct(t, { name: 'Silver monthly', tierId: silver.tierId, period: 'month' });
    goldYearly = await subscriptionProduct(t, { name: 'Gold yearly', tierId: gold.tierId, period: 'year' });
  });
  afterAll(async () => t.close());

  it('gives a user with no subscription no entries, no tier and payment_source none', async () => {
    const { headers } = await t.keyHeaders();
    expect(await summary(headers)).toEqual({ subscriptions: [], current_tier: null, payment_source: 'none' });
  });

  it('lists a card subscriber’s subscription with exactly the entry keys, and the tier from the user record', async () => {
    const { headers, id } = await subscriber('card_processor');
    const data = await summary(headers);
    expect(Object.keys(data).sort()).toEqual(['current_tier', 'payment_source', 'subscriptions']);
    expect(data.payment_source).toBe('card_processor');
    expect(data.subscriptions).toHaveLength(1);
    expect(Object.keys(data.subscriptions[0]).sort()).toEqual(ENTRY_KEYS);
    expect(data.subscriptions[0]).toEqual({
      order_item_id: id,
      name: 'Silver monthly',
      price: 999,
      period: 'month',
      status: 'active',
      renewal_or_end_date: '2026-04-01 00:00:00',
      can_cancel: true,
      scheduled_change: null,
      grace_until: null,
      billing_issue: false,
    });
    expect(data.current_tier).toEqual({ name: 'silver', display_name: 'Silver', tier_level: 10, features: expect.any(Object) });
  });

  it('reports a wallet subscriber as wallet_provider and cancellable, with exactly the entry keys', async () => {
    const { headers, id } = await subscriber('wallet_provider', goldYearly);
    const data = await summary(headers);
    expect(Object.keys(data).sort()).toEqual(['current_tier', 'payment_source', 'subscriptions']);
    expect(data.payment_source).toBe('wallet_provider');
    expect(data.subscriptions).toEqual([
      { order_item_id: id, name: 'Gold yearly', price: 999, period: 'year', status: 'active', renewal_or_end_date: '2026-04-01 00:00:00', can_cancel: true, scheduled_change: null, grace_until: null, billing_issue: false },
    ]);
    expect(data.current_tier).toEqual({ name: 'gold', display_name: 'Gold', tier_level: 20, features: expect.any(Object) });
  });

  it('reports store-billed subscriptions (iOS and Android) with can_cancel false, with exactly the entry keys', async () => {
    for (const source of ['ios_store', 'android_store'] as const) {
      const { headers, id } = await subscriber(source);
      const data = await summary(headers);
      expect(Object.keys(data).sort()).toEqual(['current_tier', 'payment_source', 'subscriptions']);
      expect(data.payment_source).toBe(source);
      expect(data.subscriptions).toEqual([
        { order_item_id: id, name: 'Silver monthly', price: 999, period: 'month', status: 'active', renewal_or_end_date: '2026-04-01 00:00:00', can_cancel: false, scheduled_change: null, grace_until: null, billing_issue: false },
      ]);
      expect(data.current_tier).toEqual({ name: 'silver', display_name: 'Silver', tier_level: 10, features: expect.any(Object) });
    }
  });

  it('shows a cancelled subscription with its end date and no cancel, and leaves ended ones out', async () => {
    const { headers, userId } = await t.keyHeaders();
    await insertSubscription(t, userId, silverMonthly, { source: 'card_processor', price: 500, periodStart: new Date('2026-01-01T00:00:00Z'), periodEnd: new Date('2026-02-01T00:00:00Z'), status: 'expired' });
    await insertSubscription(t, userId, silverMonthly, { source: 'card_processor', price: 500, periodStart: new Date('2026-01-01T00:00:00Z'), periodEnd: new Date('2026-02-01T00:00:00Z'), status: 'refunded' });
    const id = await insertSubscription(t, userId, goldYearly, { source: 'card_processor', price: 12000, periodStart: start, periodEnd: new Date('2027-03-01T00:00:00Z'), status: 'cancelled' });
    const data = await summary(headers);
    expect(data.subscriptions).toEqual([
      { order_item_id: id, name: 'Gold yearly', price: 12000, period: 'year', status: 'cancelled', renewal_or_end_date: '2027-03-01 00:00:00', can_cancel: false, scheduled_change: null, grace_until: null, billing_issue: false },
    ]);
    expect(data.payment_source).toBe('card_processor');
    // the tier comes from the user record, which here was never granted
    expect(data.current_tier).toBeNull();
  });

  it('shows only the acting user’s subscriptions', async () => {
    await subscriber('card_processor');
    const { headers } = await t.keyHeaders();
    expect((await summary(headers)).subscriptions).toEqual([]);
  });

  it('reports the manually assigned tier of a user without subscriptions', async () => {
    const { headers, userId } = await t.keyHeaders();
    await t.services.tiers.membership.assignManually(userId, gold.tierId, null);
    expect(await summary(headers)).toMatchObject({ subscriptions: [], current_tier: { name: 'gold', tier_level: 20 }, payment_source: 'none' });
  });

  it('reports can_cancel false while cancellation is disabled or the store is inactive', async () => {
    const { headers } = await subscriber('card_processor');
    await t.services.settings.set('subscription_cancellation_enabled', false);
    expect((await summary(headers)).subscriptions[0].can_cancel).toBe(false);
    await t.services.settings.set('subscription_cancellation_enabled', true);
    await t.services.settings.set('subscriptions_active', false);
    const data = await summary(headers);
    expect(data.subscriptions[0].can_cancel).toBe(false);
    expect(data.payment_source).toBe('card_processor');
    await t.services.settings.set('subscriptions_active', true);
    expect((await summary(headers)).subscriptions[0].can_cancel).toBe(true);
  });

  it('the lifecycle actions are published and need a session', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/actions', headers });
    expect(res.statusCode).toBe(200);
    for (const name of ['change_tier', 'subscription_summary', 'orders_recurring_action']) {
      expect(res.json.data[name]).toMatchObject({ requires_session: true, has_form: false });
    }
    expect(Object.keys(res.json.data.orders_recurring_action.input).sort()).toEqual(['order_item_id', 'recurring_action']);
    expect(Object.keys(res.json.data.change_tier.input).sort()).toEqual(['product_id', 'tier_id']);
  });

  it('requires a session: no key headers is refused', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/action/subscription_summary', payload: {} });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json.errortype).toBe('AuthenticationError');
  });
});
