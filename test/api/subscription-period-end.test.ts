import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { processPeriodEnds } from '../../src/store/lifecycle/period-end.js';
import { LifecycleFixture, PERIOD_END } from '../helpers/lifecycle.js';
import { insertSubscription, orderItem } from '../helpers/subscriptions.js';
import { changeRows } from '../helpers/tiers.js';

describe('subscription_period_end task', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  const run = async () => {
    const [outcome] = await f.t.services.scheduler.runNow('subscription_period_end');
    expect(outcome).toHaveProperty('result');
    return (outcome as { result: Record<string, number> }).result;
  };
  const cancel = (headers: Record<string, string>, id: number) => f.action('orders_recurring_action', headers, { order_item_id: id, recurring_action: 'cancel' });
  const justBefore = new Date(PERIOD_END.getTime() - 1000);

  it('ends a cancelled subscription at its period end, never before, exactly once', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    expect((await cancel(s.headers, s.id)).statusCode).toBe(200);
    f.t.clock.set(justBefore);
    await run();
    expect(await f.tierOf(s.userId)).toBe('silver');
    expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('cancelled');

    f.t.clock.set(PERIOD_END);
    const first = await run();
    expect(first).toMatchObject({ expired: 1, downgraded: 0 });
    expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('expired');
    expect(await f.tierOf(s.userId)).toBeNull();
    const rows = await changeRows(f.t, s.userId);
    expect(rows.at(-1)).toMatchObject({ cht_change_reason: 'expiry', cht_old_value: String(f.plans.silver.tier.tierId), cht_new_value: null, cht_reference_type: 'order_item' });

    f.t.clock.advanceSeconds(3600);
    expect(await run()).toEqual({ expired: 0, downgraded: 0, downgrades_dropped: 0, provider_errors: 0, grace_ended: 0 });
    expect(await changeRows(f.t, s.userId)).toHaveLength(rows.length);
    expect((await f.action('subscription_summary', s.headers, {})).json.data).toEqual({ subscriptions: [], current_tier: null, payment_source: 'none' });
  });

  it('ends a cancelled wallet subscription at the provider too', async () => {
    const s = await f.subscriber('wallet_provider', f.plans.gold);
    await cancel(s.headers, s.id);
    expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('SUSPENDED');
    f.t.clock.set(PERIOD_END);
    expect(await run()).toMatchObject({ expired: 1, provider_errors: 0 });
    expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('CANCELLED');
    expect(await f.tierOf(s.userId)).toBeNull();
  });

  it('leaves a reactivated subscription and an active one alone', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    await cancel(s.headers, s.id);
    await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'reactivate' });
    const other = await f.subscriber('card_processor', f.plans.gold);
    f.t.clock.set(new Date(PERIOD_END.getTime() + 86_400_000));
    expect(await run()).toMatchObject({ expired: 0, downgraded: 0 });
    expect(await f.tierOf(s.userId)).toBe('silver');
    expect(await f.tierOf(other.userId)).toBe('gold');
  });

  it('applies a scheduled downgrade at its time, never before, exactly once', async () => {
    const s = await f.subscriber('card_processor', f.plans.gold);
    expect((await f.action('change_tier', s.headers, { product_id: f.plans.bronze.productId })).json.data.change).toBe('downgrade_scheduled');
    f.t.clock.set(justBefore);
    expect(await run()).toMatchObject({ downgraded: 0 });
    expect(await f.tierOf(s.userId)).toBe('gold');

    f.t.clock.set(PERIOD_END);
    expect(await run()).toMatchObject({ downgraded: 1, expired: 0 });
    expect(await f.tierOf(s.userId)).toBe('bronze');
    const item = await orderItem(f.t, s.id);
    expect(Number(item.odi_pro_product_id)).toBe(f.plans.bronze.productId);
    expect(Number(item.odi_price)).toBe(1000);
    expect(item.odi_scheduled_pro_product_id).toBeNull();
    expect(item.odi_subscription_status).toBe('active');
    const rows = await changeRows(f.t, s.userId);
    expect(rows.at(-1)).toMatchObject({ cht_change_reason: 'downgrade', cht_old_value: String(f.plans.gold.tier.tierId), cht_new_value: String(f.plans.bronze.tier.tierId) });
    // the provider was told when the downgrade was asked for, not again at the period end
    expect(f.stripe.calls.filter((c) => c.method === 'POST' && c.path === `/v1/subscriptions/${s.ref}`)).toHaveLength(1);

    expect(await run()).toMatchObject({ downgraded: 0, downgrades_dropped: 0 });
    expect(await changeRows(f.t, s.userId)).toHaveLength(rows.length);
    expect((await f.action('subscription_summary', s.headers, {})).json.data.subscriptions[0]).toMatchObject({ name: 'bronze monthly', price: 1000, scheduled_change: null });
  });

  it('a renewal that moves the period end on does not postpone a scheduled downgrade', async () => {
    const s = await f.subscriber('wallet_provider', f.plans.gold);
    await f.action('change_tier', s.headers, { tier_id: f.plans.silver.tier.tierId });
    await (f.t.services.db as any)
      .updateTable('odi_order_items')
      .set({ odi_subscription_period_end: new Date('2026-04-30T00:00:00Z') })
      .where('odi_order_item_id', '=', s.id)
      .execute();
    f.t.clock.set(PERIOD_END);
    expect(await run()).toMatchObject({ downgraded: 1 });
    expect(await f.tierOf(s.userId)).toBe('silver');
  });

  it('drops a scheduled downgrade whose tier is no longer available', async () => {
    const s = await f.subscriber('card_processor', f.plans.gold);
    await f.action('change_tier', s.headers, { product_id: f.plans.bronze.productId });
    await f.t.services.db.updateTable('sbt_subscription_tiers').set({ sbt_is_active: false }).where('sbt_subscription_tier_id', '=', f.plans.bronze.tier.tierId).execute();
    try {
      f.t.clock.set(PERIOD_END);
      expect(await run()).toMatchObject({ downgraded: 0, downgrades_dropped: 1 });
      expect(await f.tierOf(s.userId)).toBe('gold');
      expect((await orderItem(f.t, s.id)).odi_scheduled_pro_product_id).toBeNull();
    } finally {
      await f.t.services.db.updateTable('sbt_subscription_tiers').set({ sbt_is_active: true }).where('sbt_subscription_tier_id', '=', f.plans.bronze.tier.tierId).execute();
    }
  });

  it('does not take the tier away while another subscription still pays for it', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    await cancel(s.headers, s.id);
    // bought again before the cancelled one ran out (same tier: the grant path renews, nothing is replaced)
    const again = await insertSubscription(f.t, s.userId, f.plans.silver.productId, {
      source: 'card_processor',
      price: 3000,
      periodStart: new Date('2026-03-20T00:00:00Z'),
      periodEnd: new Date('2026-04-20T00:00:00Z'),
    });
    await f.t.services.tiers.membership.grantTierFromPurchase(s.userId, f.plans.silver.productId, 'card_processor', { type: 'order_item', id: again });
    f.t.clock.set(PERIOD_END);
    expect(await run()).toMatchObject({ expired: 1 });
    expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('expired');
    expect(await f.tierOf(s.userId)).toBe('silver');
    expect((await changeRows(f.t, s.userId)).filter((r) => r.cht_change_reason === 'expiry')).toHaveLength(0);
  });

  it('a downgrade scheduled before cancelling lapses with the subscription, and applies again after reactivation', async () => {
    const lapsed = await f.subscriber('card_processor', f.plans.gold);
    const kept = await f.subscriber('card_processor', f.plans.gold);
    for (const s of [lapsed, kept]) {
      await f.action('change_tier', s.headers, { product_id: f.plans.bronze.productId });
      await cancel(s.headers, s.id);
      expect((await f.action('subscription_summary', s.headers, {})).json.data.subscriptions[0]).toMatchObject({ status: 'cancelled', scheduled_change: null });
    }
    expect((await f.action('orders_recurring_action', kept.headers, { order_item_id: kept.id, recurring_action: 'reactivate' })).statusCode).toBe(200);
    expect((await f.action('subscription_summary', kept.headers, {})).json.data.subscriptions[0].scheduled_change).toMatchObject({ tier_name: 'bronze' });
    f.t.clock.set(PERIOD_END);
    expect(await run()).toMatchObject({ expired: 1, downgraded: 1 });
    expect(await f.tierOf(lapsed.userId)).toBeNull();
    expect(await f.tierOf(kept.userId)).toBe('bronze');
  });

  it('concurrent runs (as on several nodes) apply each change once', async () => {
    const a = await f.subscriber('card_processor', f.plans.silver);
    const b = await f.subscriber('card_processor', f.plans.gold);
    await cancel(a.headers, a.id);
    await f.action('change_tier', b.headers, { product_id: f.plans.bronze.productId });
    f.t.clock.set(PERIOD_END);
    const { db, clock, settings } = f.t.services;
    const results = await Promise.all([1, 2, 3, 4].map(() => processPeriodEnds(db, clock, settings)));
    expect(results.reduce((n, r) => n + r.expired, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.downgraded, 0)).toBe(1);
    expect((await changeRows(f.t, a.userId)).filter((r) => r.cht_change_reason === 'expiry')).toHaveLength(1);
    expect((await changeRows(f.t, b.userId)).filter((r) => r.cht_change_reason === 'downgrade')).toHaveLength(1);
    expect(await f.tierOf(a.userId)).toBeNull();
    expect(await f.tierOf(b.userId)).toBe('bronze');
  });
});
