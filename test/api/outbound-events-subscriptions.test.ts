import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TierMembershipService } from '../../src/tiers/membership.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { eventMark, eventsSince, typesSince } from '../helpers/event-log.js';
import { CARD_WEBHOOK_SECRET, cardDriver } from '../helpers/providers/card-driver.js';
import { stripeEvent, stripeSignature } from '../helpers/providers/stripe-signer.js';
import { createProduct, itemFor, postWebhook, providerDay, setStoreActive, uniqueRef, type Delivery, type ProviderFact } from '../helpers/store.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

/**
 * The event log (DESIGN 15) from the card processor's webhooks, signed as the processor signs them:
 * every status transition writes its event in the webhook's transaction, once per real transition; a
 * duplicate delivery writes nothing; a processing that fails after the change writes nothing either.
 */
const CLOCK_START = '2026-03-01T12:00:00Z';
const at = providerDay;
const secs = (d: Date) => Math.floor(d.getTime() / 1000);
const stamp = (d: Date) => d.toISOString().replace('T', ' ').slice(0, 19);

let t: TestApp;
let silver: TestTier;
let gold: TestTier;
beforeAll(async () => {
  t = await createTestApp({ start: CLOCK_START });
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  gold = await createTier(t, { name: 'gold', level: 30 });
  await cardDriver.setup(t);
});
afterAll(async () => t.close());
beforeEach(async () => {
  t.clock.set(CLOCK_START);
  await t.services.settings.set('card_processor_grace_days', 7);
});

const md = (f: ProviderFact) => ({ user_id: String(f.userId), product_id: String(f.productId) });
const sign = (event: object): Delivery => {
  const body = JSON.stringify(event);
  return { headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, CARD_WEBHOOK_SECRET, Math.floor(t.clock.nowMs() / 1000)) }, body };
};
const send = async (delivery: Delivery | Promise<Delivery>) => {
  const res = await postWebhook(t, 'card_processor', await delivery);
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data as { duplicate: boolean; processed: boolean; outcomes: Array<Record<string, unknown>> };
};
const subscriptionUpdated = (f: ProviderFact, when: Date, now: Record<string, unknown>, previous: Record<string, unknown>) =>
  sign(
    stripeEvent(
      'customer.subscription.updated',
      { id: f.ref, object: 'subscription', status: 'active', cancel_at_period_end: false, pause_collection: null, current_period_end: secs(f.periodEnd), metadata: md(f), ...now },
      { created: secs(when), previous },
    ),
  );
const paymentFailed = (f: ProviderFact, o: { invoiceCreated: Date; at: Date; attempt?: number }) =>
  sign(
    stripeEvent(
      'invoice.payment_failed',
      {
        id: `in_${f.ref}_${secs(o.invoiceCreated)}`,
        object: 'invoice',
        billing_reason: 'subscription_cycle',
        status: 'open',
        paid: false,
        attempted: true,
        attempt_count: o.attempt ?? 1,
        amount_due: 1500,
        amount_paid: 0,
        currency: 'usd',
        created: secs(o.invoiceCreated),
        parent: { type: 'subscription_details', subscription_details: { subscription: f.ref, metadata: md(f) } },
        lines: { object: 'list', data: [{ id: 'il_1', period: { start: secs(o.invoiceCreated), end: secs(o.invoiceCreated) + 30 * 86400 }, metadata: {} }] },
      },
      { created: secs(o.at) },
    ),
  );

async function fact(tier: TestTier = silver): Promise<ProviderFact & { email: string }> {
  const { userId, email } = await t.createUser();
  const providerProductId = uniqueRef('price_');
  const productId = await createProduct(t, { tierId: tier.tierId, refs: { pro_card_price_id: providerProductId }, name: `${tier.name} monthly`, price: 1500 });
  return { userId, email, productId, providerProductId, ref: uniqueRef('sub_'), at: at(0), periodEnd: at(30) };
}

/** What every subscription event of this fixture carries, with its status and period end. */
const subscriptionData = (f: ProviderFact & { email: string }, itemId: number, orderId: number, tier: TestTier, extra: Record<string, unknown>) => ({
  user_id: f.userId,
  email: f.email,
  order_item_id: itemId,
  order_id: orderId,
  product: { id: f.productId, name: `${tier.name} monthly` },
  tier: { id: tier.tierId, name: tier.name, level: tier.level },
  source: 'card_processor',
  price: 1500,
  currency: 'usd',
  cancel_at_period_end: false,
  ...extra,
});

async function purchased(f: ProviderFact & { email: string }) {
  await send(cardDriver.purchase(t, f));
  const item = (await itemFor(t, 'card_processor', f.ref))!;
  return { itemId: Number(item.odi_order_item_id), orderId: Number(item.odi_ord_order_id) };
}

describe('a purchase', () => {
  it('writes order.paid, subscription.created and tier.granted with the member, product, tier and status; a duplicate delivery writes nothing', async () => {
    const f = await fact();
    const mark = await eventMark(t);
    const delivery = await cardDriver.purchase(t, f);
    await send(delivery);
    const item = (await itemFor(t, 'card_processor', f.ref))!;
    const itemId = Number(item.odi_order_item_id);
    const orderId = Number(item.odi_ord_order_id);
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['order.paid', 'subscription.created', 'tier.granted']);
    for (const e of events) {
      expect(e).toMatchObject({ userId: f.userId, api_version: '1.0', timestamp: '2026-03-01 12:00:00' });
      expect(e.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
      expect(Object.keys(e).sort()).toEqual(['api_version', 'data', 'id', 'rowId', 'timestamp', 'type', 'userId']);
    }
    expect(events[0]!.data).toEqual({
      order_id: orderId,
      user_id: f.userId,
      email: f.email,
      total: 1500,
      currency: 'usd',
      source: 'card_processor',
      items: [{ order_item_id: itemId, product: { id: f.productId, name: 'silver monthly' }, price: 1500, is_subscription: true }],
    });
    expect(events[1]!.data).toEqual(subscriptionData(f, itemId, orderId, silver, { status: 'active', period_end: null, provider_event: 'purchase' }));
    expect(events[2]!.data).toEqual({
      user_id: f.userId,
      email: f.email,
      tier: { id: silver.tierId, name: 'silver', level: 20 },
      previous_tier: null,
      how: 'purchase',
      source: 'card_processor',
      product_id: f.productId,
      order_item_id: itemId,
    });

    const again = await send(delivery);
    expect(again.duplicate).toBe(true);
    expect(await typesSince(t, events.at(-1)!.rowId)).toEqual([]);
  });

  it('a processing that fails after the change rolls its events back with it; the retry writes them once', async () => {
    const f = await fact();
    const mark = await eventMark(t);
    const grant = TierMembershipService.prototype.grantTierFromPurchase;
    const spy = vi.spyOn(TierMembershipService.prototype, 'grantTierFromPurchase').mockImplementationOnce(async function (this: TierMembershipService, ...args) {
      await grant.apply(this, args);
      throw new Error('simulated failure after the grant');
    });
    const delivery = await cardDriver.purchase(t, f);
    const failed = await postWebhook(t, 'card_processor', delivery);
    spy.mockRestore();
    expect(failed.statusCode).toBe(500);
    expect(await itemFor(t, 'card_processor', f.ref)).toBeUndefined();
    expect(await typesSince(t, mark)).toEqual([]);
    await send(delivery);
    expect(await typesSince(t, mark)).toEqual(['order.paid', 'subscription.created', 'tier.granted']);
  });

  it('a purchase of a higher tier moves the member: tier.granted names the previous tier', async () => {
    const low = await fact(silver);
    await purchased(low);
    const high = { ...(await fact(gold)), userId: low.userId, email: low.email };
    const mark = await eventMark(t);
    await send(cardDriver.purchase(t, high));
    const granted = (await eventsSince(t, mark)).find((e) => e.type === 'tier.granted')!;
    expect(granted.data).toMatchObject({ tier: { id: gold.tierId, name: 'gold', level: 30 }, previous_tier: { id: silver.tierId, name: 'silver', level: 20 }, how: 'purchase' });
  });
});

describe('the subscription lifecycle from provider events', () => {
  it('renewal, billing issue, on hold, recovery, pause, cancellation scheduled and undone, refund: one event per transition', async () => {
    const f = await fact();
    const { itemId, orderId } = await purchased(f);
    const data = (extra: Record<string, unknown>) => subscriptionData(f, itemId, orderId, silver, extra);

    // A renewal moves the paid period on.
    let mark = await eventMark(t);
    await send(cardDriver.renewal(t, { ...f, at: at(30), periodEnd: at(60) }));
    let events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.renewed']);
    expect(events[0]!.data).toEqual(data({ status: 'active', period_end: stamp(at(60)), provider_event: 'renewal', previous_period_end: null }));

    // A failed renewal: billing_issue once, however many retries fail.
    mark = await eventMark(t);
    await send(paymentFailed(f, { invoiceCreated: at(60), at: at(60) }));
    await send(paymentFailed(f, { invoiceCreated: at(60), at: at(62), attempt: 2 }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.billing_issue']);
    expect(events[0]!.data).toEqual(data({ status: 'in_grace', period_end: stamp(at(60)), provider_event: 'in_grace', previous_status: 'active', grace_until: stamp(at(67)) }));

    // Unpaid: on hold, the tier removed as a billing failure.
    mark = await eventMark(t);
    await send(subscriptionUpdated(f, at(63), { status: 'unpaid' }, { status: 'past_due' }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.on_hold', 'tier.removed']);
    expect(events[0]!.data).toEqual(data({ status: 'on_hold', period_end: stamp(at(60)), provider_event: 'on_hold', previous_status: 'in_grace' }));
    expect(events[1]!.data).toEqual({
      user_id: f.userId,
      email: f.email,
      tier: { id: silver.tierId, name: 'silver', level: 20 },
      how: 'purchase',
      reason: 'billing_failure',
      cause: 'on_hold',
      source: 'card_processor',
      order_item_id: itemId,
    });

    // Back to active: recovered, the tier granted again.
    mark = await eventMark(t);
    await send(subscriptionUpdated(f, at(64), { status: 'active' }, { status: 'unpaid' }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.recovered', 'tier.granted']);
    expect(events[0]!.data).toMatchObject({ status: 'active', previous_status: 'on_hold', provider_event: 'recovery' });

    // Paused with a resume time: the tier removed ('revoked', cause paused); lifting the pause recovers.
    mark = await eventMark(t);
    const pause = { behavior: 'void', resumes_at: secs(at(80)) };
    await send(subscriptionUpdated(f, at(65), { pause_collection: pause }, { pause_collection: null }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.paused', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'paused', previous_status: 'active', resume_time: stamp(at(80)) });
    expect(events[1]!.data).toMatchObject({ reason: 'revoked', cause: 'paused' });
    mark = await eventMark(t);
    await send(subscriptionUpdated(f, at(80), { pause_collection: null }, { pause_collection: pause }));
    expect(await typesSince(t, mark)).toEqual(['subscription.recovered', 'tier.granted']);

    // Cancelled at the provider for the period end, then undone.
    mark = await eventMark(t);
    await send(cardDriver.cancelScheduled(t, { ...f, at: at(81), periodEnd: at(90) }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.cancel_scheduled']);
    expect(events[0]!.data).toMatchObject({ status: 'cancelled', cancel_at_period_end: true, period_end: stamp(at(90)), provider_event: 'cancellation_scheduled' });
    // The same state reported again is no transition.
    await send(cardDriver.cancelScheduled(t, { ...f, at: at(82), periodEnd: at(90) }));
    expect(await typesSince(t, mark)).toEqual(['subscription.cancel_scheduled']);
    mark = await eventMark(t);
    await send(cardDriver.cancelUndone(t, { ...f, at: at(83), periodEnd: at(90) }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.reactivated']);
    expect(events[0]!.data).toMatchObject({ status: 'active', cancel_at_period_end: false });

    // A whole refund: refunded, the tier removed for a refund.
    mark = await eventMark(t);
    await send(cardDriver.refund(t, { ...f, at: at(84) }));
    events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.refunded', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'refunded', refund_amount: 1500 });
    expect(events[1]!.data).toMatchObject({ reason: 'refund', cause: 'refund' });

    // Every event of the story is the member's.
    expect((await eventsSince(t, 0, { userId: f.userId })).every((e) => e.data.user_id === f.userId)).toBe(true);
  });

  it('the subscription deleted at the provider: expired, the tier removed for expiry', async () => {
    const f = await fact();
    await purchased(f);
    const mark = await eventMark(t);
    await send(cardDriver.expiry(t, { ...f, at: at(31) }));
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.expired', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'expired', cause: 'expiry', provider_event: 'expiry' });
    expect(events[1]!.data).toMatchObject({ reason: 'expiry', cause: 'expiry', how: 'purchase' });
  });

  it('a grace period that runs out in the period-end task: on_hold and tier.removed once, however often the task runs', async () => {
    const f = await fact();
    await purchased(f);
    await send(paymentFailed(f, { invoiceCreated: at(30), at: at(30) }));
    const mark = await eventMark(t);
    t.clock.set(at(37));
    await t.services.scheduler.runNow('subscription_period_end');
    await t.services.scheduler.runNow('subscription_period_end');
    const events = await eventsSince(t, mark);
    expect(events.map((e) => e.type)).toEqual(['subscription.on_hold', 'tier.removed']);
    expect(events[0]!.data).toMatchObject({ status: 'on_hold', previous_status: 'in_grace', grace_until: stamp(at(37)) });
    expect(events[0]!.timestamp).toBe(stamp(at(37)));
  });
});
