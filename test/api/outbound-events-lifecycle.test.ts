import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reconcileSubscriptions } from '../../src/store/reconcile/reconcile.js';
import { eventMark, eventsSince, typesSince } from '../helpers/event-log.js';
import { LifecycleFixture, PERIOD_END } from '../helpers/lifecycle.js';

/**
 * The event log (DESIGN 15) from the member's own subscription actions, the period-end task and
 * reconciliation: each change writes its event in its transaction; a refused request writes none.
 */
describe('outbound events of the subscription lifecycle', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  const set = (name: string, value: unknown) => f.t.services.settings.set(name, value);
  const email = async (userId: number) =>
    (await f.t.services.db.selectFrom('usr_users').select('usr_email').where('usr_user_id', '=', userId).executeTakeFirstOrThrow()).usr_email;
  const runPeriodEnd = () => f.t.services.scheduler.runNow('subscription_period_end');

  it('cancel at the period end: subscription.cancel_scheduled with the member and period end; reactivate: subscription.reactivated', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    let mark = await eventMark(f.t);
    const cancel = await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' });
    expect(cancel.statusCode, cancel.body).toBe(200);
    let events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.cancel_scheduled']);
    expect(events[0]!.userId).toBe(s.userId);
    expect(events[0]!.data).toEqual({
      user_id: s.userId,
      email: await email(s.userId),
      order_item_id: s.id,
      order_id: expect.any(Number),
      product: { id: f.plans.silver.productId, name: 'silver monthly' },
      tier: { id: f.plans.silver.tier.tierId, name: 'silver', level: 20 },
      source: 'card_processor',
      status: 'cancelled',
      period_end: '2026-03-31 00:00:00',
      cancel_at_period_end: true,
      price: 3000,
      currency: expect.any(String),
      by: 'member',
    });

    mark = await eventMark(f.t);
    const reactivate = await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'reactivate' });
    expect(reactivate.statusCode, reactivate.body).toBe(200);
    events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.reactivated']);
    expect(events[0]!.data).toMatchObject({ status: 'active', cancel_at_period_end: false, by: 'member' });
  });

  it('a cancelled subscription whose period ends: subscription.expired and tier.removed once, however often the task runs', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' });
    const mark = await eventMark(f.t);
    f.t.clock.set(PERIOD_END);
    await runPeriodEnd();
    await runPeriodEnd();
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.expired', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'expired', cause: 'expiry', period_end: '2026-03-31 00:00:00' });
    expect(events[1]!.data).toMatchObject({ reason: 'expiry', cause: 'expiry', how: 'purchase', source: 'card_processor', order_item_id: s.id });
  });

  it('an immediate cancellation with a prorated refund: subscription.refunded and tier.removed (cancellation); a provider refusal writes nothing', async () => {
    await set('subscription_cancellation_timing', 'immediate');
    await set('subscription_cancellation_prorate', true);
    const refused = await f.subscriber('card_processor', f.plans.silver);
    f.stripe.refuseRefunds = { status: 402, code: 'card_declined', message: 'declined' };
    let mark = await eventMark(f.t);
    const no = await f.action('orders_recurring_action', refused.headers, { order_item_id: refused.id, recurring_action: 'cancel' });
    expect(no.statusCode).toBe(502);
    expect(await typesSince(f.t, mark)).toEqual([]);
    f.stripe.refuseRefunds = null;

    const s = await f.subscriber('card_processor', f.plans.silver);
    mark = await eventMark(f.t);
    const res = await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' });
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.refunded', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'refunded', refund_amount: res.json.data.refund_amount, by: 'member' });
    expect(events[1]!.data).toMatchObject({ reason: 'cancellation', cause: 'cancellation', tier: { name: 'silver' } });
  });

  it('an immediate cancellation without proration: subscription.expired (cause cancellation)', async () => {
    await set('subscription_cancellation_timing', 'immediate');
    const s = await f.subscriber('card_processor', f.plans.silver);
    const mark = await eventMark(f.t);
    const res = await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' });
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.expired', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'expired', cause: 'cancellation' });
  });

  it('change_tier upgrade: subscription.changed (upgrade) and tier.granted from the previous tier; a provider failure writes nothing', async () => {
    const failing = await f.subscriber('card_processor', f.plans.silver);
    f.stripe.subscriptions.delete(failing.ref);
    let mark = await eventMark(f.t);
    const no = await f.action('change_tier', failing.headers, { product_id: f.plans.gold.productId });
    expect(no.statusCode).toBe(502);
    expect(await typesSince(f.t, mark)).toEqual([]);

    const s = await f.subscriber('card_processor', f.plans.silver);
    mark = await eventMark(f.t);
    const res = await f.action('change_tier', s.headers, { product_id: f.plans.gold.productId });
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['tier.granted', 'subscription.changed']);
    expect(events[0]!.data).toMatchObject({
      tier: { id: f.plans.gold.tier.tierId, name: 'gold', level: 30 },
      previous_tier: { id: f.plans.silver.tier.tierId, name: 'silver', level: 20 },
      how: 'purchase',
      source: 'card_processor',
      product_id: f.plans.gold.productId,
      order_item_id: s.id,
    });
    expect(events[1]!.data).toMatchObject({
      change: 'upgrade',
      previous_product_id: f.plans.silver.productId,
      product: { id: f.plans.gold.productId, name: 'gold monthly' },
      tier: { name: 'gold', level: 30 },
      status: 'active',
    });
  });

  it('a downgrade scheduled for the period end: nothing until it applies, then subscription.changed (downgrade) once', async () => {
    const s = await f.subscriber('card_processor', f.plans.gold);
    const mark = await eventMark(f.t);
    const res = await f.action('change_tier', s.headers, { product_id: f.plans.bronze.productId });
    expect(res.json.data.change).toBe('downgrade_scheduled');
    expect(await typesSince(f.t, mark)).toEqual([]);
    f.t.clock.set(PERIOD_END);
    await runPeriodEnd();
    await runPeriodEnd();
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.changed', 'tier.granted']);
    expect(events[0]!.data).toMatchObject({ change: 'downgrade', scheduled: true, previous_product_id: f.plans.gold.productId, product: { id: f.plans.bronze.productId } });
    expect(events[1]!.data).toMatchObject({ tier: { name: 'bronze', level: 10 }, previous_tier: { name: 'gold', level: 30 } });
  });

  it('reconciliation applies an end the provider knows: subscription.expired and tier.removed with how reconcile', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.stripe.subscriptions.get(s.ref)!.status = 'canceled';
    const mark = await eventMark(f.t);
    const report = await reconcileSubscriptions(f.t.services.store.context(), f.t.services.tiers.membership, { userId: s.userId });
    expect(report.applied).toBe(1);
    const events = await eventsSince(f.t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.expired', 'tier.removed']);
    expect(events[1]!.data).toMatchObject({ how: 'reconcile', reason: 'expiry', user_id: s.userId });
    // Run again: the provider and we agree, nothing more is written.
    await reconcileSubscriptions(f.t.services.store.context(), f.t.services.tiers.membership, { userId: s.userId });
    expect(await typesSince(f.t, mark)).toEqual(['subscription.expired', 'tier.removed']);
  });
});
