import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LifecycleFixture, type Source } from '../helpers/lifecycle.js';
import { orderItem, subscriptionProduct } from '../helpers/subscriptions.js';
import { changeRows } from '../helpers/tiers.js';

describe('change_tier', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  const change = (headers: Record<string, string>, payload: Record<string, unknown>) => f.action('change_tier', headers, payload);
  const set = (name: string, value: unknown) => f.t.services.settings.set(name, value);
  const stripeUpdates = (ref: string) => f.stripe.calls.filter((c) => c.method === 'POST' && c.path === `/v1/subscriptions/${ref}`);
  const providerWrites = () => [...f.stripe.calls.filter((c) => c.method !== 'GET'), ...f.paypal.calls.filter((c) => c.method !== 'GET' && c.path !== '/v1/oauth2/token')];

  async function expectRefused(res: Awaited<ReturnType<typeof change>>, reason: string) {
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.data.reason).toBe(reason);
    expect(res.json.error.length).toBeGreaterThan(10);
  }

  describe('upgrade: always available, bought now with prorated billing', () => {
    it('card: the plan changes with prorations, the member moves up, and the change is tracked', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const res = await change(s.headers, { product_id: f.plans.gold.productId });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({
        order_item_id: s.id,
        change: 'upgrade',
        tier: { name: 'gold', display_name: 'Gold', tier_level: 30 },
        effective_date: '2026-03-01 12:00:00',
        approval_url: null,
      });
      const update = stripeUpdates(s.ref);
      expect(update).toHaveLength(1);
      expect(update[0]!.body).toMatchObject({
        items: [{ id: `si_${s.ref}`, price: 'price_gold' }],
        proration_behavior: 'always_invoice',
        metadata: { product_id: String(f.plans.gold.productId) },
      });
      expect(await f.tierOf(s.userId)).toBe('gold');
      const item = await orderItem(f.t, s.id);
      expect(Number(item.odi_pro_product_id)).toBe(f.plans.gold.productId);
      expect(Number(item.odi_price)).toBe(6000);
      const last = (await changeRows(f.t, s.userId)).at(-1)!;
      expect(last).toMatchObject({
        cht_change_reason: 'upgrade',
        cht_old_value: String(f.plans.silver.tier.tierId),
        cht_new_value: String(f.plans.gold.tier.tierId),
        cht_reference_type: 'order_item',
      });
      expect(JSON.parse(last.cht_metadata!)).toMatchObject({ source: 'card_processor', old_tier: 'silver', new_tier: 'gold' });
      const summary = (await f.action('subscription_summary', s.headers, {})).json.data;
      expect(summary.current_tier.name).toBe('gold');
      expect(summary.subscriptions[0]).toMatchObject({ order_item_id: s.id, name: 'gold monthly', price: 6000, status: 'active' });
    });

    it('wallet, by tier_id: the plan is revised and the payer approval link is returned', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.bronze);
      const res = await change(s.headers, { tier_id: f.plans.silver.tier.tierId });
      expect(res.statusCode).toBe(200);
      const revise = f.paypal.callsTo('POST', `/v1/billing/subscriptions/${s.ref}/revise`);
      expect(revise.map((c) => c.body)).toEqual([{ plan_id: 'P-SILVER' }]);
      expect(res.json.data.approval_url).toBe(`${f.paypal.base}/approve/${s.ref}`);
      expect(res.json.redirect).toBe('/profile/subscription');
      expect(res.json.success_message).toBe('Your subscription has been upgraded to Silver. Approve the new plan with your wallet provider to complete the change.');
      expect(await f.tierOf(s.userId)).toBe('silver');
    });

    it('is available while downgrades are disabled', async () => {
      await set('subscription_downgrades_enabled', false);
      const s = await f.subscriber('card_processor', f.plans.bronze);
      expect((await change(s.headers, { product_id: f.plans.gold.productId })).json.data.change).toBe('upgrade');
      expect(await f.tierOf(s.userId)).toBe('gold');
    });

    it('a retry with the same Idempotency-Key replays the answer without asking the provider again', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const send = () =>
        f.t.request({ method: 'POST', url: '/api/v1/action/change_tier', headers: { ...s.headers, 'idempotency-key': `up-${s.id}` }, payload: { product_id: f.plans.gold.productId } });
      const first = await send();
      const second = await send();
      expect(first.statusCode).toBe(200);
      expect(second.statusCode).toBe(200);
      expect(second.json.data).toEqual(first.json.data);
      expect(stripeUpdates(s.ref)).toHaveLength(1);
      expect((await changeRows(f.t, s.userId)).filter((r) => r.cht_change_reason === 'upgrade')).toHaveLength(1);
    });

    it('a provider failure is a 502 and the member stays where they were', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      f.stripe.subscriptions.delete(s.ref);
      const res = await change(s.headers, { product_id: f.plans.gold.productId });
      expect(res.statusCode).toBe(502);
      expect(res.json.data.reason).toBe('provider_unavailable');
      expect(await f.tierOf(s.userId)).toBe('silver');
      expect(Number((await orderItem(f.t, s.id)).odi_pro_product_id)).toBe(f.plans.silver.productId);
      expect((await changeRows(f.t, s.userId)).map((r) => r.cht_change_reason)).toEqual(['purchase']);
    });
  });

  describe('downgrade with subscription_downgrade_timing immediate', () => {
    beforeEach(async () => set('subscription_downgrade_timing', 'immediate'));

    it('card: the plan changes now with prorations and the member moves down', async () => {
      const s = await f.subscriber('card_processor', f.plans.gold);
      const res = await change(s.headers, { product_id: f.plans.bronze.productId });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ change: 'downgrade', tier: { name: 'bronze' }, effective_date: '2026-03-01 12:00:00' });
      expect(stripeUpdates(s.ref)[0]!.body).toMatchObject({ items: [{ price: 'price_bronze' }], proration_behavior: 'create_prorations' });
      expect(await f.tierOf(s.userId)).toBe('bronze');
      expect((await changeRows(f.t, s.userId)).at(-1)).toMatchObject({ cht_change_reason: 'downgrade', cht_new_value: String(f.plans.bronze.tier.tierId) });
      expect((await orderItem(f.t, s.id)).odi_scheduled_pro_product_id).toBeNull();
    });

    it('wallet: the plan is revised and the member moves down', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.gold);
      expect((await change(s.headers, { tier_id: f.plans.silver.tier.tierId })).statusCode).toBe(200);
      expect(f.paypal.subscriptions.get(s.ref)!.plan_id).toBe('P-SILVER');
      expect(await f.tierOf(s.userId)).toBe('silver');
    });
  });

  describe('downgrade with subscription_downgrade_timing end_of_period', () => {
    it('is scheduled: the provider bills the lower plan from the next period, the tier stays, the summary shows it', async () => {
      const s = await f.subscriber('card_processor', f.plans.gold);
      const res = await change(s.headers, { product_id: f.plans.bronze.productId });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({
        order_item_id: s.id,
        change: 'downgrade_scheduled',
        tier: { name: 'bronze', display_name: 'Bronze', tier_level: 10 },
        effective_date: '2026-03-31 00:00:00',
        approval_url: null,
      });
      expect(stripeUpdates(s.ref)[0]!.body).toMatchObject({ items: [{ price: 'price_bronze' }], proration_behavior: 'none' });
      expect(await f.tierOf(s.userId)).toBe('gold');
      expect((await changeRows(f.t, s.userId)).map((r) => r.cht_change_reason)).toEqual(['purchase']);
      const entry = (await f.action('subscription_summary', s.headers, {})).json.data.subscriptions[0];
      expect(entry).toMatchObject({ name: 'gold monthly', price: 6000, status: 'active' });
      expect(entry.scheduled_change).toEqual({
        kind: 'downgrade',
        product_id: f.plans.bronze.productId,
        name: 'bronze monthly',
        tier_name: 'bronze',
        effective_date: '2026-03-31 00:00:00',
      });
    });

    it('is undone by asking for the current tier again before it applies', async () => {
      const s = await f.subscriber('card_processor', f.plans.gold);
      await change(s.headers, { product_id: f.plans.bronze.productId });
      const res = await change(s.headers, { tier_id: f.plans.gold.tier.tierId });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ change: 'scheduled_downgrade_cancelled', tier: { name: 'gold' } });
      expect(stripeUpdates(s.ref).map((c) => [c.body.items[0].price, c.body.proration_behavior])).toEqual([
        ['price_bronze', 'none'],
        ['price_gold', 'none'],
      ]);
      expect((await f.action('subscription_summary', s.headers, {})).json.data.subscriptions[0].scheduled_change).toBeNull();
      expect(await f.tierOf(s.userId)).toBe('gold');
      // with nothing scheduled, the current tier again is refused
      await expectRefused(await change(s.headers, { tier_id: f.plans.gold.tier.tierId }), 'same_tier');
    });

    it('is replaced by another lower tier, and dropped by an upgrade', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.silver);
      await change(s.headers, { product_id: f.plans.bronze.productId });
      expect(Number((await orderItem(f.t, s.id)).odi_scheduled_pro_product_id)).toBe(f.plans.bronze.productId);
      const up = await change(s.headers, { product_id: f.plans.gold.productId });
      expect(up.json.data.change).toBe('upgrade');
      const item = await orderItem(f.t, s.id);
      expect(item.odi_scheduled_pro_product_id).toBeNull();
      expect(item.odi_scheduled_change_time).toBeNull();
      expect(await f.tierOf(s.userId)).toBe('gold');
      expect(f.paypal.subscriptions.get(s.ref)!.plan_id).toBe('P-GOLD');
    });
  });

  describe('refusals leave state unchanged and call no provider', () => {
    async function unchanged(s: { id: number; userId: number }, tier: string | null) {
      expect(await f.tierOf(s.userId)).toBe(tier);
      expect((await orderItem(f.t, s.id)).odi_scheduled_pro_product_id).toBeNull();
      expect(providerWrites()).toEqual([]);
    }

    it('refuses a downgrade while subscription_downgrades_enabled is off (both timings)', async () => {
      await set('subscription_downgrades_enabled', false);
      for (const timing of ['immediate', 'end_of_period']) {
        await set('subscription_downgrade_timing', timing);
        const s = await f.subscriber('card_processor', f.plans.gold);
        await expectRefused(await change(s.headers, { product_id: f.plans.bronze.productId }), 'downgrades_disabled');
        await unchanged(s, 'gold');
      }
    });

    it('refuses store-billed subscriptions, pointing to the store', async () => {
      for (const [source, store] of [
        ['ios_store', 'the App Store'],
        ['android_store', 'Google Play'],
      ] as Array<[Source, string]>) {
        const s = await f.subscriber(source, f.plans.silver);
        const res = await change(s.headers, { product_id: f.plans.gold.productId });
        await expectRefused(res, 'store_billed');
        expect(res.json.error).toContain(store);
        await unchanged(s, 'silver');
      }
    });

    it('refuses a member without a subscription, and a cancelled one', async () => {
      const { headers } = await f.t.keyHeaders();
      await expectRefused(await change(headers, { product_id: f.plans.gold.productId }), 'no_subscription');
      const s = await f.subscriber('card_processor', f.plans.silver, { status: 'cancelled' });
      await expectRefused(await change(s.headers, { product_id: f.plans.gold.productId }), 'already_cancelled');
      await unchanged(s, 'silver');
    });

    it('refuses the current tier, a product without a tier, and an inactive product', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      await expectRefused(await change(s.headers, { product_id: f.plans.silver.productId }), 'same_tier');
      const mug = await subscriptionProduct(f.t, { name: 'Mug', tierId: null, period: null });
      await expectRefused(await change(s.headers, { product_id: mug }), 'not_a_tier_product');
      const retired = await subscriptionProduct(f.t, { name: 'Old gold', tierId: f.plans.gold.tier.tierId, active: false });
      await expectRefused(await change(s.headers, { product_id: retired }), 'product_unavailable');
      await expectRefused(await change(s.headers, { product_id: 999_999 }), 'product_unavailable');
      await unchanged(s, 'silver');
    });

    it('refuses while the store is inactive', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      await set('products_active', false);
      await expectRefused(await change(s.headers, { product_id: f.plans.gold.productId }), 'store_inactive');
      await unchanged(s, 'silver');
    });

    it('refuses a plan not sold through the subscription’s source', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const walletOnly = await subscriptionProduct(f.t, { name: 'Gold (wallet only)', tierId: f.plans.gold.tier.tierId, extra: { pro_price: 6000, pro_wallet_plan_id: 'P-GOLD-2' } });
      await expectRefused(await change(s.headers, { product_id: walletOnly }), 'product_unavailable');
      await unchanged(s, 'silver');
    });

    it('asks for exactly one of product_id and tier_id', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      for (const payload of [{}, { product_id: f.plans.gold.productId, tier_id: f.plans.gold.tier.tierId }]) {
        const res = await change(s.headers, payload);
        expect(res.statusCode).toBe(422);
        expect(res.json.errortype).toBe('ValidationError');
        expect(Object.keys(res.json.validation_errors).sort()).toEqual(['product_id', 'tier_id']);
      }
      await unchanged(s, 'silver');
    });
  });
});
