import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LifecycleFixture, PERIOD_END } from '../helpers/lifecycle.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { postWebhook, type ProviderFact } from '../helpers/store.js';
import { orderItem } from '../helpers/subscriptions.js';
import { changeRows } from '../helpers/tiers.js';

/** The lifecycle's own changes and the provider's later webhooks for the same subscription agree. */
describe('lifecycle changes followed by the card processor’s webhooks', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => {
    await f.start();
    await cardDriver.setup(f.t);
  });
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  const run = async () => ((await f.t.services.scheduler.runNow('subscription_period_end'))[0] as { result: Record<string, number> }).result;
  const fact = (s: { userId: number; ref: string }, productId: number, periodEnd: Date): ProviderFact => ({
    userId: s.userId,
    productId,
    providerProductId: '',
    ref: s.ref,
    at: f.t.clock.now(),
    periodEnd,
    eventId: `evt_${s.ref}_${f.t.clock.nowMs()}_${productId}`,
  });

  it('a scheduled downgrade: the renewal bills the lower plan, the tier moves at the scheduled time', async () => {
    const s = await f.subscriber('card_processor', f.plans.gold);
    expect((await f.action('change_tier', s.headers, { product_id: f.plans.bronze.productId })).json.data.change).toBe('downgrade_scheduled');
    // what the card processor now holds for the subscription: the lower price and product
    const update = f.stripe.calls.filter((c) => c.method === 'POST' && c.path === `/v1/subscriptions/${s.ref}`).at(-1)!;
    const renewedProduct = Number(update.body.metadata.product_id);
    expect(renewedProduct).toBe(f.plans.bronze.productId);

    f.t.clock.set(PERIOD_END);
    const nextEnd = new Date('2026-04-30T00:00:00Z');
    const renewal = await postWebhook(f.t, 'card_processor', await cardDriver.renewal(f.t, fact(s, renewedProduct, nextEnd)));
    expect(renewal.statusCode).toBe(200);
    // the renewal of this subscription with the lower product is the downgrade taking effect: the item
    // names the plan now paid for, the member moves down with it, and the period moves on
    expect(await f.tierOf(s.userId)).toBe('bronze');
    const item = await orderItem(f.t, s.id);
    expect(item.odi_subscription_period_end.toISOString()).toBe(nextEnd.toISOString());
    expect(Number(item.odi_pro_product_id)).toBe(f.plans.bronze.productId);
    expect(item.odi_scheduled_pro_product_id).toBeNull();

    // the period-end task finds nothing left to do
    expect(await run()).toMatchObject({ downgraded: 0 });
    expect(await f.tierOf(s.userId)).toBe('bronze');
    const summary = (await f.action('subscription_summary', s.headers, {})).json.data;
    expect(summary.subscriptions).toEqual([
      expect.objectContaining({ order_item_id: s.id, name: 'bronze monthly', price: 1000, status: 'active', renewal_or_end_date: '2026-04-30 00:00:00', scheduled_change: null }),
    ]);
    expect(summary.current_tier.name).toBe('bronze');
  });

  it('an end-of-period cancellation: the provider’s echo changes nothing, and the end is applied once whoever comes first', async () => {
    for (const webhookFirst of [true, false]) {
      f.t.clock.set('2026-03-01T12:00:00Z');
      const s = await f.subscriber('card_processor', f.plans.silver);
      expect((await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' })).statusCode).toBe(200);
      const echo = await postWebhook(f.t, 'card_processor', await cardDriver.cancelScheduled(f.t, fact(s, f.plans.silver.productId, PERIOD_END)));
      expect(echo.statusCode).toBe(200);
      expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('cancelled');
      expect(await f.tierOf(s.userId)).toBe('silver');

      f.t.clock.set(PERIOD_END);
      const deleted = async () => expect((await postWebhook(f.t, 'card_processor', await cardDriver.expiry(f.t, fact(s, f.plans.silver.productId, PERIOD_END)))).statusCode).toBe(200);
      if (webhookFirst) {
        await deleted();
        await run();
      } else {
        await run();
        await deleted();
      }
      expect(await f.tierOf(s.userId)).toBeNull();
      expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('expired');
      expect((await changeRows(f.t, s.userId)).filter((r) => r.cht_change_reason === 'expiry')).toHaveLength(1);
    }
  });

  it('an immediate cancellation: the provider’s deletion that follows changes nothing', async () => {
    await f.t.services.settings.set('subscription_cancellation_timing', 'immediate');
    const s = await f.subscriber('card_processor', f.plans.silver);
    expect((await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'cancel' })).statusCode).toBe(200);
    const before = await changeRows(f.t, s.userId);
    expect((await postWebhook(f.t, 'card_processor', await cardDriver.expiry(f.t, fact(s, f.plans.silver.productId, PERIOD_END)))).statusCode).toBe(200);
    expect(await changeRows(f.t, s.userId)).toHaveLength(before.length);
    expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('expired');
    expect(await f.tierOf(s.userId)).toBeNull();
  });
});
